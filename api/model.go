package api

import "github.com/metamesh/node/model"

// The HTTP API speaks the model's types: a Backend answers with them and
// the handlers write them as they are. These names are the model's, given
// here so that the API's code and its clients read api.Document and
// api.ErrNotFound; code below the HTTP layer uses package model.

// The model's types of the API's answers and requests.
type (
	Document       = model.Document
	Meta           = model.Meta
	Value          = model.Value
	ValueKind      = model.ValueKind
	FileSummary    = model.FileSummary
	SearchResult   = model.SearchResult
	SearchHit      = model.SearchHit
	LibraryQuery   = model.LibraryQuery
	LibraryPage    = model.LibraryPage
	LibraryEntry   = model.LibraryEntry
	LibraryCounts  = model.LibraryCounts
	ScanProgress   = model.ScanProgress
	ProvideStats   = model.ProvideStats
	ProvidedRegion = model.ProvidedRegion
	Findable       = model.Findable
	NotFoundError  = model.NotFoundError
	// GET /api/households and a household's library.
	HouseholdsAnswer = model.HouseholdsAnswer
	Household        = model.Household
	HouseholdQuery   = model.HouseholdQuery
	HouseholdLibrary = model.HouseholdLibrary
	// The household's members and how far each watched a file.
	WatchUpdate    = model.WatchUpdate
	WatchState     = model.WatchState
	WatchEntry     = model.WatchEntry
	WatchList      = model.WatchList
	MembersAnswer  = model.MembersAnswer
	ContinueAnswer = model.ContinueAnswer
	NextEpisode    = model.NextEpisode
)

// The kinds of Value.
const (
	KindString = model.KindString
	KindInt    = model.KindInt
	KindFloat  = model.KindFloat
	KindObject = model.KindObject
	KindList   = model.KindList
)

// The views of GET /api/library.
const (
	ViewRecent = model.ViewRecent
	ViewMovies = model.ViewMovies
	ViewOther  = model.ViewOther
	ViewFolder = model.ViewFolder
	ViewShows  = model.ViewShows
	ViewPeers  = model.ViewPeers
)

// The states of a household's library (Household.Library).
const (
	LibraryShared  = model.LibraryShared
	LibraryRefused = model.LibraryRefused
	LibraryFailed  = model.LibraryFailed
)

// The model's errors a Backend returns; status maps each to its code.
var (
	ErrNotFound      = model.ErrNotFound
	ErrBadRequest    = model.ErrBadRequest
	ErrUnavailable   = model.ErrUnavailable
	ErrConflict      = model.ErrConflict
	ErrUnprocessable = model.ErrUnprocessable
	ErrRefused       = model.ErrRefused
	ErrPeerFailed    = model.ErrPeerFailed
	ErrPeerTimeout   = model.ErrPeerTimeout
)

// The model's makers of values and of metadata.
var (
	StringValue = model.StringValue
	IntValue    = model.IntValue
	FloatValue  = model.FloatValue
	ObjectValue = model.ObjectValue
	ListValue   = model.ListValue
	NestMeta    = model.NestMeta
	FlattenMeta = model.FlattenMeta
)
