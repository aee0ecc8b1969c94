package model

import (
	"encoding/json"
	"fmt"
)

// SearchResult is the JSON shape of GET /api/search.
type SearchResult struct {
	// Hits: local first, then peers' (deduplicated by canonical CID).
	Hits []SearchHit `json:"hits"`
	// Next is the cursor of the next local page, "" on the last.
	Next string `json:"next,omitempty"`
	// Peers are the peers whose answers were merged (federated only).
	Peers []string `json:"peers"`
	// Asked is how many households a federated search asked, FromIndex
	// how many of them because the DHT's keyword index named them (a
	// connected one included when the index's turn reached it first; the
	// others are connected peers); 0 for a local search.
	Asked     int `json:"asked"`
	FromIndex int `json:"fromIndex"`
	// PeerNames are the household names of the peers the result names
	// (Peers, and each hit's source and peers), by peer ID, for those
	// whose last answer carried one: what each household calls itself,
	// verified by no one. Left out when empty.
	PeerNames map[string]string `json:"peerNames,omitempty"`
}

// SearchHit is one hit of GET /api/search: a file's summary, its
// members, its IMDb ID and the peers that answered it. The node builds
// every hit, local or a peer's, in one place (from the store's summary
// of a root of its index, or a protocol.SearchHit of a peer's verified
// answer). Its JSON object's keys are sorted, as when a hit was a map;
// cid, cids, fileType, size, source and title are always sent.
type SearchHit struct {
	// FileSummary: the CID is the canonical CID; the year, season,
	// episode and episode title are what the index knows of a hit of its
	// own (local files and files peers sent before), or what a peer's
	// answer over /metamesh/search/1.1.0 or 1.2.0 said (one over 1.0.0 carries
	// none of them). Source is "local" for a local file, else the peer it
	// is known from.
	FileSummary
	// CIDs are the file's members (those the node vouches for, for a
	// local file).
	CIDs   []string `json:"cids"`
	IMDbID string   `json:"imdbid,omitempty"`
	// Peers are the peers whose answers held the hit: for a hit only a
	// peer's answer gave, that peer first; for one the index holds from
	// peers, the peer that supplied it first, when another peer answered
	// it too. Never set on a local file's hit.
	Peers []string `json:"peers,omitempty"`
	// Subtitles are the languages of the subtitles the file has, Art the
	// kinds of its artwork (poster, fanart, …), as the index knows them:
	// sidecars are never hits of their own. Left out when none (always
	// for a hit only a peer's answer gave).
	Subtitles []string `json:"subtitles,omitempty"`
	Art       []string `json:"art,omitempty"`
}

// hitAlways are the names a hit always has, with their zero values.
var hitAlways = map[string]json.RawMessage{"cid": json.RawMessage(`""`), "fileType": json.RawMessage(`""`),
	"size": json.RawMessage(`0`), "source": json.RawMessage(`""`)}

// MarshalJSON writes the hit's object, its keys sorted.
func (h SearchHit) MarshalJSON() ([]byte, error) {
	type plain SearchHit
	return sortedJSON(plain(h), hitAlways)
}

// UnmarshalJSON reads a hit, its whole numbers however they are written
// (3000000, 3e6): metamesh search reads the JSON of any node.
func (h *SearchHit) UnmarshalJSON(b []byte) error {
	type plain SearchHit
	var raw struct {
		plain
		Episode json.RawMessage `json:"episode"`
		Season  json.RawMessage `json:"season"`
		Size    json.RawMessage `json:"size"`
		Year    json.RawMessage `json:"year"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*h = SearchHit(raw.plain)
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		set  func(int64)
	}{
		{"episode", raw.Episode, func(n int64) { h.Episode = ptr(int(n)) }},
		{"season", raw.Season, func(n int64) { h.Season = ptr(int(n)) }},
		{"size", raw.Size, func(n int64) { h.Size = n }},
		{"year", raw.Year, func(n int64) { h.Year = int(n) }},
	} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		n, err := wholeNumber(f.raw)
		if err != nil {
			return fmt.Errorf("model: search hit %s: %w", f.name, err)
		}
		f.set(n)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
