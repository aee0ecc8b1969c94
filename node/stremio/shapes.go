package stremio

// The JSON shapes of the add-on protocol's answers, each field named as
// the protocol names it (snake_case and camelCase as it has them).

// Manifest answers manifest.json.
type Manifest struct {
	ID            string        `json:"id"`
	Version       string        `json:"version"`
	Name          string        `json:"name"`
	Description   string        `json:"description"`
	Resources     []string      `json:"resources"`
	Types         []string      `json:"types"`
	Catalogs      []CatalogDecl `json:"catalogs"`
	IDPrefixes    []string      `json:"idPrefixes"`
	BehaviorHints ManifestHints `json:"behaviorHints"`
}

// CatalogDecl is one catalog of a manifest.
type CatalogDecl struct {
	Type  string      `json:"type"`
	ID    string      `json:"id"`
	Name  string      `json:"name"`
	Extra []ExtraDecl `json:"extra"`
}

// ExtraDecl is one extra property a catalog takes.
type ExtraDecl struct {
	Name       string `json:"name"`
	IsRequired bool   `json:"isRequired"`
}

// ManifestHints are the manifest's behaviorHints.
type ManifestHints struct {
	Adult                 bool `json:"adult"`
	P2P                   bool `json:"p2p"`
	Configurable          bool `json:"configurable"`
	ConfigurationRequired bool `json:"configurationRequired"`
}

// CatalogAnswer answers a catalog request.
type CatalogAnswer struct {
	Metas []MetaPreview `json:"metas"`
}

// MetaPreview is one item of a catalog.
type MetaPreview struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Poster      string `json:"poster,omitempty"`
	PosterShape string `json:"posterShape"`
	ReleaseInfo string `json:"releaseInfo,omitempty"`
}

// MetaAnswer answers a meta request.
type MetaAnswer struct {
	Meta Meta `json:"meta"`
}

// Meta is one item in full.
type Meta struct {
	ID            string     `json:"id"`
	Type          string     `json:"type"`
	Name          string     `json:"name"`
	Poster        string     `json:"poster,omitempty"`
	PosterShape   string     `json:"posterShape"`
	Background    string     `json:"background,omitempty"`
	Description   string     `json:"description,omitempty"`
	ReleaseInfo   string     `json:"releaseInfo,omitempty"`
	Year          int        `json:"year,omitempty"`
	Released      string     `json:"released,omitempty"`
	Runtime       string     `json:"runtime,omitempty"`
	IMDbID        string     `json:"imdb_id,omitempty"`
	Genres        []string   `json:"genres,omitempty"`
	Videos        []Video    `json:"videos,omitempty"`
	BehaviorHints *MetaHints `json:"behaviorHints,omitempty"`
}

// MetaHints are a meta's behaviorHints: a film's one video is the item
// itself, so Stremio goes to its streams at once.
type MetaHints struct {
	DefaultVideoID string `json:"defaultVideoId,omitempty"`
}

// Video is one episode of a series' meta.
type Video struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Season    int    `json:"season"`
	Episode   int    `json:"episode"`
	Released  string `json:"released"`
	Overview  string `json:"overview,omitempty"`
	Thumbnail string `json:"thumbnail,omitempty"`
}

// StreamAnswer answers a stream request.
type StreamAnswer struct {
	Streams []Stream `json:"streams"`
}

// Stream is one way to play a video: a URL of the node's.
type Stream struct {
	URL           string      `json:"url"`
	Name          string      `json:"name"`
	Title         string      `json:"title"`
	Description   string      `json:"description"`
	BehaviorHints StreamHints `json:"behaviorHints"`
}

// StreamHints are a stream's behaviorHints.
type StreamHints struct {
	// NotWebReady: a browser cannot play the URL as it is (its container
	// or codecs), so Stremio plays it through its streaming server.
	NotWebReady bool `json:"notWebReady,omitempty"`
	// BingeGroup: Stremio picks the next episode's stream of the same
	// group by itself.
	BingeGroup string `json:"bingeGroup"`
	Filename   string `json:"filename,omitempty"`
	VideoSize  int64  `json:"videoSize,omitempty"`
}
