package model

// The states of a household's library (Household.Library).
const (
	LibraryShared  = "shared"  // it answered: its counts are there
	LibraryRefused = "refused" // it does not show its list to this household
	LibraryFailed  = "failed"  // it did not answer, or what it sent did not verify
)

// HouseholdsAnswer is the JSON shape of GET /api/households.
type HouseholdsAnswer struct {
	// Households are the connected peers that speak the library
	// protocol, by peer ID (never null).
	Households []Household `json:"households"`
}

// Household is another household, as its answer to the library protocol
// told it.
type Household struct {
	// Peer is its peer ID; Name what it calls itself (verified by no
	// one), left out when it gave none.
	Peer string `json:"peer"`
	Name string `json:"name,omitempty"`
	// Library is LibraryShared, LibraryRefused or LibraryFailed; Films
	// and Shows count its list when shared; Error says why it failed.
	Library string `json:"library"`
	Films   int    `json:"films"`
	Shows   int    `json:"shows"`
	Error   string `json:"error,omitempty"`
}

// HouseholdQuery is one request of GET /api/households/<peer>/library.
type HouseholdQuery struct {
	// Peer is the household's peer ID.
	Peer string
	// View is ViewMovies or ViewShows; with Show a show's seasons are
	// listed, and with Season too its episodes.
	View   string
	Show   string
	Season int // -1 for none
	// Q keeps the films or shows whose title holds every word ("": all).
	Q string
	// Page is 1-based; Limit 1..the library protocol's cap.
	Page, Limit int
}

// HouseholdLibrary is the JSON shape of GET /api/households/<peer>/library:
// one page of a friend's household's list, as it signed it.
type HouseholdLibrary struct {
	Peer string `json:"peer"`
	Name string `json:"name,omitempty"`
	// View is "movies", "shows", "seasons" or "episodes", as in
	// LibraryPage; Show, ShowTitle and Season too.
	View      string `json:"view"`
	Show      string `json:"show,omitempty"`
	ShowTitle string `json:"showTitle,omitempty"`
	Season    *int   `json:"season,omitempty"`
	Q         string `json:"q,omitempty"`
	// Page, Pages, Limit and Total as in LibraryPage.
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	// Films and Shows count the household's whole list.
	Films int `json:"films"`
	Shows int `json:"shows"`
	// Entries are the page's (never null): films and episodes as files
	// (their Source the household's peer ID), shows and seasons as in
	// LibraryPage.
	Entries []LibraryEntry `json:"entries"`
}
