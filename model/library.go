package model

// The views of GET /api/library.
// The first three list this household's own files; ViewPeers the files
// it knows only from other households.
const (
	ViewRecent = "recent" // every video and audio file, newest first
	ViewMovies = "movies" // videos that are no episode, by title then year
	ViewShows  = "shows"  // shows by title; with show= its seasons, with season= too its episodes
	ViewPeers  = "peers"  // files known only from peers, the most recently learned first
	ViewOther  = "other"  // home videos and other videos that are no film or episode (videoType other), by title
	ViewFolder = "folder" // with folder=<dir>, the household's videos below a directory, by path
)

// LibraryQuery is one request of GET /api/library.
type LibraryQuery struct {
	// View is ViewRecent, ViewMovies, ViewShows or ViewPeers.
	View string
	// Show, with ViewShows, is the key of one show (LibraryEntry.Show):
	// its seasons are listed, or with Season its episodes.
	Show string
	// Season is a season of Show, -1 for none.
	Season int
	// Folder, with ViewFolder, is a directory: the household's videos
	// whose path is below it, by path.
	Folder string
	// Page is 1-based; Limit is at least 1 (the API bounds it,
	// api.MaxLibraryLimit).
	Page, Limit int
}

// LibraryPage is the JSON shape of GET /api/library.
type LibraryPage struct {
	// View is "recent", "movies", "shows", "seasons" (of one show),
	// "episodes" (of one season of one show) or "peers".
	View string `json:"view"`
	// Show is the show of a "seasons" or "episodes" list: its key, its
	// title.
	Show      string `json:"show,omitempty"`
	ShowTitle string `json:"showTitle,omitempty"`
	// Season is the season of an "episodes" list.
	Season *int `json:"season,omitempty"`
	// Entries are the page's entries (never null).
	Entries []LibraryEntry `json:"entries"`
	// Page is this page (1-based), Pages how many there are (0 for an
	// empty list), Limit the entries per page and Total the entries of
	// the whole list. A page past the last is empty.
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	// Files counts the whole library.
	Files LibraryCounts `json:"files"`
	// PeerNames are the household names of the peers the entries come
	// from (their source), by peer ID, for those whose last answer
	// carried one: what each household calls itself, verified by no one.
	// Left out when empty.
	PeerNames map[string]string `json:"peerNames,omitempty"`
}

// LibraryEntry is one entry of a list: a file (Kind "file"), a show
// ("show") or a season of a show ("season").
type LibraryEntry struct {
	Kind string `json:"kind"`
	// Show is the key a show is asked for with (show=): set on shows,
	// seasons and episodes.
	Show string `json:"show,omitempty"`
	// FileSummary is a file's; a show's and a season's entry have only
	// its Title (a show's, or a season's show's) and a season's its
	// Season.
	FileSummary
	// Seasons is how many seasons a show has; Episodes how many episodes
	// a show or a season has.
	Seasons  int `json:"seasons,omitempty"`
	Episodes int `json:"episodes,omitempty"`
}

// LibraryCounts counts the files of the library (every root: sidecars
// and files known only from peers included, as Status.Roots does).
type LibraryCounts struct {
	// Local are the files this node holds; FromPeers those it knows only
	// from peers' records.
	Local     int `json:"local"`
	FromPeers int `json:"fromPeers"`
	// Loaded is false until the node has read its whole library once
	// since it started: until then the counts and lists may be short.
	Loaded bool `json:"loaded"`
}
