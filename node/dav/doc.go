// Package dav is the household's library as a read-only WebDAV share
// (/dav/, mounted by the API: api.DAV), for Kodi, VLC, Infuse, file
// managers and rclone mount. Its tree is laid out from the metadata,
// never from the library's folders:
//
//	Movies/<Title> (<Year>)/<Title> (<Year>).<ext>, .nfo, .<lang>.srt, poster.jpg
//	TV Shows/<Show>/tvshow.nfo, poster.jpg, Season NN/<Show> - SNNEMM - <Episode title>.<ext>, .nfo, .<lang>.srt
//	Other videos/<Title>.<ext>, .nfo
//	From other households/<household>/Movies|TV Shows|Other videos/…
//
// Names are made safe for every client (SafeName: no "/", "\", ":",
// control characters or the other characters Windows refuses), two
// that would be the same (case aside) get " (2)", a root is one file (a
// file held under several paths shows once). The .nfo files are made
// in the format Kodi and Jellyfin read, from what the metadata says.
//
// # Files
//
//   - item.go: Item, what the share shows of one root (ItemOf, of a
//     document), and Field, the fields whose writes change one.
//   - names.go: SafeName, and the names of one folder handed out once.
//   - layout.go: Layout, the tree (Entry, Tree.Find) made from the
//     items.
//   - nfo.go: the .nfo files (<movie>, <episodedetails>, <tvshow>).
//   - library.go: Library, the items kept in step with the store (a
//     store.Consumer) and the last layout, made anew on a request after
//     a change.
//   - share.go: Share, the api.DAV: PROPFIND and OPTIONS through
//     golang.org/x/net/webdav on a read-only webdav.FileSystem of the
//     layout, GET and HEAD of a file through Open (the API serves its
//     bytes as /api/file serves a CID's).
//   - names_test.go, layout_test.go, library_test.go: SafeName, the
//     layout of a library and its collisions, the .nfo files (table
//     tests), FuzzSafeName; the library following the store's changes.
//
// # Goroutines and concurrency
//
// Take runs on store.Changes' one delivering goroutine; requests read the
// tree on net/http's. The Library's mutex guards its items and the last
// layout; a Tree, once made, is never changed, so a request reads the
// one it got without a lock.
package dav
