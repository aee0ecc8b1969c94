// Package privacy is the one rule of what a household tells its peers of
// each library file, by folder: Rules.Of(path) says whether the file is
// private (peers learn nothing of it) and whether its bytes are shared
// (peers may fetch them over bitswap). Every part of the node that shows
// a local file to peers asks it: the announcer (no provider record, no
// search words for a private file), the record and search protocols (no
// answer, no hit), the bitswap server (a file's bytes only when shared),
// and whatever lists the library to peers.
//
// # The rule
//
//   - --share-files alone shares every library file's bytes;
//     --share-files=DIR (repeatable) shares the files under DIR, which
//     must be inside a library (New refuses it otherwise).
//   - A .metamesh-share file in a folder shares the bytes of the folder's
//     files and everything under it.
//   - A .metamesh-private file in a folder makes the folder and
//     everything under it private: never announced (no provider record,
//     no search words), no record answered, never in a search answer or
//     a listing to peers, no bytes served. Private wins: a
//     .metamesh-share (or a shared folder of the command line) under a
//     private folder shares nothing. A marker that cannot be looked at
//     (a permission or I/O error) counts as private.
//   - A file neither private nor shared is announced and answered for
//     (its CID, its record, its search words) but its bytes are not
//     served: that is every file of a household that gives no
//     --share-files and has no markers.
//   - A root whose content is at several paths is judged by the path the
//     store names (store.Document.FilePath).
//
// # Where the state is kept
//
// Nowhere but in the library: the rules stat the markers of a path's
// folders up to its library's root at every question (a few stats), so
// a marker added or removed counts at the next question, and nothing
// stored can disagree with the library. The node's watcher tells the
// node when a marker file changes (ingest.Config.OnMarker): it then
// has the announcer take every root again (so a file that became
// private stops being provided and one that became public is provided)
// and closes the files bitswap held open. What peers already hold stays
// with them: DHT provider records expire on their own (48 h), and
// records and search hits a peer fetched are kept there.
//
// # Files
//
//   - privacy.go: the marker names, Config, New, Rules (Of, Private,
//     Shared, Look, Folders).
//   - privacy_test.go: markers, nesting, the command line's folders,
//     Folders.
//
// # Concurrency
//
// A Rules is safe for concurrent use: its settings do not change after
// New; the folders it found markers in are guarded by a mutex.
package privacy
