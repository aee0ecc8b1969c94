package search

import (
	"slices"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Answer is one peer's verified answer to a federated search: its hits
// in the order it sent them.
type Answer struct {
	Peer string
	Hits []protocol.SearchHit
}

// Merge is a search's page of hits: the local hits (local, a page of
// the household's own index as the store reads them), then, from
// answers (the peers' verified answers, in the order turns go: by peer
// ID), peers' hits not already shown, attributed to every peer that sent
// them. Peers' new hits are at most limit in all, taken in turns (every
// peer's first hit, then every peer's second, …), so no one peer's answer
// fills the page. A hit shown already (by canonical CID) names the peer
// that sent it again, unless it is a local file's or the one peer it is
// known from; a hit of the local index keeps its place. Nil when there is
// no hit.
func Merge(local []store.SearchHit, answers []Answer, limit int) []model.SearchHit {
	var hits []model.SearchHit
	seen := map[string]int{} // canonical CID → its hit in hits
	for _, h := range local {
		seen[h.CID] = len(hits)
		hits = append(hits, Hit(h, ""))
	}
	longest := 0
	for _, a := range answers {
		longest = max(longest, len(a.Hits))
	}
	added := 0
	for i := range longest {
		for _, a := range answers {
			if i >= len(a.Hits) {
				continue
			}
			h, from := a.Hits[i], a.Peer
			if k, ok := seen[h.CID]; ok {
				// Shown already: the peer is named, unless the hit is a
				// local file's, or the one peer it is known from.
				hit := &hits[k]
				switch {
				case hit.Peers != nil:
					if !slices.Contains(hit.Peers, from) {
						hit.Peers = append(hit.Peers, from)
					}
				case hit.Source != "local" && hit.Source != from:
					hit.Peers = []string{hit.Source, from}
				}
				continue
			}
			if added == limit {
				continue
			}
			seen[h.CID] = len(hits)
			hits = append(hits, Hit(h, from))
			added++
		}
	}
	return hits
}

// Hit is the one place a search's hits are built: from a hit of the
// local index (a store.SearchHit: its source, "local" or the peer that
// supplied the root, and the year, season, episode, episode title and
// IMDb ID it knows) or from peer from's verified answer (a
// protocol.SearchHit: source and peers are that peer; the details are
// what a 1.1.0 answer carried, none over 1.0.0). from is unused for a
// store hit.
func Hit[H store.SearchHit | protocol.SearchHit](h H, from string) model.SearchHit {
	switch h := any(h).(type) {
	case store.SearchHit:
		return model.SearchHit{FileSummary: h.File(), CIDs: h.CIDs, IMDbID: h.IMDbID, Subtitles: h.Subtitles, Art: h.Art}
	case protocol.SearchHit:
		return model.SearchHit{FileSummary: model.FileSummary{CID: h.CID, Title: h.Title, Size: h.Size, FileType: h.FileType, Source: from,
			Year: h.Year, Season: h.Season, Episode: h.Episode, EpisodeTitle: h.EpisodeTitle}, CIDs: h.CIDs, IMDbID: h.IMDbID, Peers: []string{from}}
	}
	panic("unreachable")
}
