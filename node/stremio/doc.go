// Package stremio serves the household's library as a Stremio add-on
// (the public add-on protocol: manifest.json, and the catalog, meta and
// stream resources), so a TV or a phone running Stremio lists the
// household's films and shows and plays them from the node.
//
// It answers under Prefix (/stremio) and hands every other request to
// the API's handler, through which it also serves the files' bytes and
// posters (file/<cid> and converted/<cid>, of the films and episodes it
// lists only, and thumb/<cid> are GET /api/file, /api/stream and
// /api/thumb with the API's token). Every answer carries
// Access-Control-Allow-Origin: *, as the protocol wants. On loopback the
// paths take no token (but a Host that is not the node's is refused, as
// the API refuses it); off loopback every path carries the add-on's
// token after the prefix (/stremio/<token>/manifest.json), since
// Stremio sends no header: without it, or with another, 401. That
// token is PathToken of the API's bearer token (an HMAC of it): it opens
// the add-on only, so the URL Stremio keeps in the household's account
// does not hold the API's token. GET /api/stremio (LinkPath) gives a
// client of the API, with the API's token off loopback, the whole URL.
//
// IDs are IMDb's where the household's NFOs give them (tt…, tt…:S:E), so
// Stremio also finds the household's copy of what other add-ons list,
// else the node's own (mm:<cid> for a film, mm:show:<key> for a show);
// ids.go says their grammar.
//
// # Files
//
//   - doc.go: this.
//   - addon.go: Addon (an http.Handler), Config and Source (what it
//     reads besides the catalog), the access rules and PathToken, the
//     routes, file/ and thumb/ handed to the API, and GET /api/stremio
//     (the add-on's URL).
//   - resources.go: the manifest, the catalogs (the catalog's films and
//     shows, paged by skip, and search), meta (a film's, a show's with
//     its episodes as videos).
//   - streams.go: stream: the files that hold a film or an episode, and
//     streamsOf, the one place that lists the URLs a file plays from.
//   - shapes.go: the protocol's JSON shapes.
//   - ids.go: ParseID (item and video IDs) and ParseExtra (a catalog's
//     search and skip), for untrusted input.
//   - ids_test.go: the ID and extra grammars, both ways, and the fuzz
//     target of both parsers.
//
// # Concurrency
//
// An Addon holds no state of its own beyond its Config: requests run on
// net/http's goroutines and read the catalog (under its lock) and the
// Source.
package stremio
