// Package model is the vocabulary the node's layers speak: a file's
// document and its typed metadata, the summaries a search and the
// library's lists show, the scan's and the provider's figures, and the
// errors a request's answer may be. The store, the ingester and the
// node's parts (announce, catalog, federation, …) answer with these
// types; the HTTP API (package api) writes them as they are and maps the
// errors to status codes. Nothing below the HTTP layer imports api.
//
// Each type's JSON form is the API's wire contract, byte for byte (the
// golden answers in api/testdata): Document and SearchHit write theirs by
// hand, keys sorted as when they were maps.
//
// # Files
//
//   - document.go: Document, one file as this node knows it (the answer
//     of GET /api/meta), its one JSON form and reading it back; Encode,
//     the answer encoded once for a cached document.
//   - value.go: Meta and Value, open metadata nested and typed, and
//     their JSON.
//   - nest.go: NestMeta, flat "a/b" fields nested into Meta, each typed
//     by the caller; FlattenMeta, back to flat fields.
//   - jsonwrite.go: strings, numbers and bytes written as encoding/json
//     writes them; EncodeAnswer, the indented form of every answer.
//   - summary.go: FileSummary, what a search hit and a library entry
//     show of a file.
//   - search.go: SearchResult and SearchHit, a search's page.
//   - library.go: the library's views (View*), LibraryQuery,
//     LibraryPage, LibraryEntry and LibraryCounts.
//   - households.go: the other households this one knows
//     (HouseholdsAnswer, Household) and one page of a friend's library
//     (HouseholdLibrary), GET /api/households and its library.
//   - duplicates.go: GET /api/duplicates' groupings (DuplicatesBy*),
//     DuplicatesQuery, DuplicatesPage, DuplicateGroup and DuplicateCopy.
//   - watching.go: the household's members (CheckMemberName,
//     MembersAnswer) and how far each watched a file (WatchUpdate,
//     WatchState, WatchEntry, WatchList, ContinueAnswer, NextEpisode).
//   - stream.go: StreamState, how a stream converted for a browser is
//     made (its mode, speed, whether it keeps up).
//   - status.go: ScanProgress, ProvideStats, ProvidedRegion and Findable,
//     the scan's and the provider's figures.
//   - errors.go: the sentinel errors (ErrNotFound, ErrBadRequest,
//     ErrUnavailable, ErrConflict, ErrUnprocessable, ErrRefused,
//     ErrPeerFailed, ErrPeerTimeout) and NotFoundError.
//
// The package holds values only: no goroutines, no state. A Document's
// fields must not change once Encode ran.
package model
