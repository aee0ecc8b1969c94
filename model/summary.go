package model

import "encoding/json"

// FileSummary is what a list shows of one file: the fields a search hit
// and a file's entry of the library's lists share. The node builds it in
// one function from the store's summary of a root (store.Summary.File)
// and a search hit from a peer's verified answer in another.
type FileSummary struct {
	// CID is the file's canonical CID: GET /api/meta/<cid> is its record.
	CID string `json:"cid,omitempty"`
	// Title is the file's title (an episode's is its show's). Always
	// sent.
	Title        string `json:"title"`
	Year         int    `json:"year,omitempty"`
	Season       *int   `json:"season,omitempty"`
	Episode      *int   `json:"episode,omitempty"`
	EpisodeTitle string `json:"episodeTitle,omitempty"`
	// Recorded is the day a home video was recorded, YYYY-MM-DD (or a
	// month or a year a household wrote: YYYY-MM, YYYY); left out when
	// its record holds none.
	Recorded string `json:"recorded,omitempty"`
	Size     int64  `json:"size,omitempty"`
	FileType string `json:"fileType,omitempty"`
	// Poster is the CID of the file's poster, when it has one: the image
	// is GET /api/file/<poster>, a thumbnail of it GET /api/thumb/<poster>.
	// A show's and a season's entry carry the poster of their first
	// episode that has one.
	Poster string `json:"poster,omitempty"`
	// Source is "local" for a file this node holds, else the peer it is
	// known from.
	Source string `json:"source,omitempty"`
}

// sortedJSON is v's JSON object with its keys sorted, as encoding/json
// writes a map's, and each name of always given its zero value when v
// left it out.
func sortedJSON(v any, always map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, zero := range always {
		if _, ok := m[k]; !ok {
			m[k] = zero
		}
	}
	return json.Marshal(m)
}
