package model

// The groupings of GET /api/duplicates.
const (
	// DuplicatesByContent groups the paths of one file: the same bytes
	// found under several paths of the libraries.
	DuplicatesByContent = "content"
	// DuplicatesByTitle groups distinct files (other bytes) that are the
	// same film or the same episode.
	DuplicatesByTitle = "title"
)

// DuplicatesQuery is one request of GET /api/duplicates.
type DuplicatesQuery struct {
	// By is DuplicatesByContent or DuplicatesByTitle.
	By string
	// Page is 1-based; Limit is at least 1 (the API bounds it,
	// api.MaxLibraryLimit).
	Page, Limit int
}

// DuplicatesPage is the JSON shape of GET /api/duplicates: one page of
// the groups, the most wasted bytes first.
type DuplicatesPage struct {
	By string `json:"by"`
	// Groups are the page's groups (never null).
	Groups []DuplicateGroup `json:"groups"`
	// Page, Pages, Limit and Total as LibraryPage's: Total counts the
	// groups of the whole list.
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	// Wasted is the bytes every group of the list wastes, in all.
	Wasted int64 `json:"wasted"`
	// Loaded is false until the node has read its whole library once:
	// the list may then be short.
	Loaded bool `json:"loaded"`
}

// DuplicateGroup is one file under several paths (by content) or one
// work held as several files (by title).
type DuplicateGroup struct {
	// Key tells the group apart in its list: by content the file's CID;
	// by title "film:<title>|<year>", "imdb:<id>" or
	// "episode:<show>|<season>|<episode>", as the catalog folds titles.
	Key string `json:"key"`
	// Title is the film's or the show's; Year, Season, Episode and
	// EpisodeTitle as far as the files say; IMDbID when one of them has
	// one.
	Title        string `json:"title"`
	Year         int    `json:"year,omitempty"`
	Season       *int   `json:"season,omitempty"`
	Episode      *int   `json:"episode,omitempty"`
	EpisodeTitle string `json:"episodeTitle,omitempty"`
	IMDbID       string `json:"imdbid,omitempty"`
	// Count is how many copies there are: by content every path, of
	// which Copies lists at most the file's first 101 (its primary path,
	// then 100 duplicates).
	Count int `json:"count"`
	// Size is the bytes of every copy; Wasted what keeping only one
	// would free: by content every copy but one, by title every copy but
	// the largest.
	Size   int64 `json:"size"`
	Wasted int64 `json:"wasted"`
	// Copies are the copies side by side: by content the paths of the
	// one file (primary first, then sorted), by title the files, largest
	// first.
	Copies []DuplicateCopy `json:"copies"`
}

// DuplicateCopy is one copy of a group: a path of a file, and what the
// file's metadata says of its encoding where it says it (ffprobe's
// fileinfo/…, else what its name gives, release/…).
type DuplicateCopy struct {
	CID  string `json:"cid"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Resolution is ffprobe's width×height ("1920x1080"), else the
	// name's (release/resolution: "1080p").
	Resolution string `json:"resolution,omitempty"`
	// VideoCodec and AudioCodec are the first video and audio stream's
	// (ffprobe's codec name: "h264", "aac"), else the name's
	// (release/videoCodec, release/audioCodec).
	VideoCodec string `json:"videoCodec,omitempty"`
	AudioCodec string `json:"audioCodec,omitempty"`
	// Runtime is fileinfo/duration in whole seconds, 0 when unknown.
	Runtime int `json:"runtime,omitempty"`
}
