// Package api serves the node's HTTP API: JSON handlers, the error shape
// ({"error": "..."} with a fitting status) and routing. It never reaches
// Redis: everything goes through the Backend interface, which the node
// satisfies. It owns only HTTP: the types it answers with and the errors
// it maps to statuses are package model's, the vocabulary of the layers
// below it, none of which imports api.
//
// Files: server.go (routes, handlers, ServeHTTP), edit.go (the write
// API: PUT, DELETE and PATCH /api/meta/<cid>, POST /api/meta/batch, the
// Editor a Backend may be, ParsePatch and ParseBatch), errors.go (error →
// status mapping), param.go (parsing of untrusted path and query input),
// access.go (loopback Host check, bearer token, --public-read, the
// session cookie of a browser an invite let in and its cross-site
// request forgery check), invites.go (/api/invites and the links
// /invite/<code>: the session cookie, the LAN addresses of the links),
// strangers.go (who a request is for, and the per-address token buckets
// that limit the federated work of clients without the token),
// model.go (the model's names the API speaks, given here: Document,
// SearchHit, the errors, …), file.go
// (/api/file), dav.go (the WebDAV share under /dav/, a DAV the node
// gives: its access rules, HTTP Basic with the token as the password,
// and its reading methods; GET of a file served as /api/file's),
// stream.go (/api/stream: a stream converted by the Backend's Streamer
// for a browser that cannot play the file as it is, sent as it is made,
// and its status), peerfile.go (a peer's file through /api/file, and
// /api/sources, when the Backend is a PeerFiles), thumb.go (/api/thumb: a poster's thumbnail, through the
// Backend's Thumbnailer), subtitle.go (/api/subtitle: a subtitle file as
// WebVTT, ToWebVTT; at most MaxSubtitleConversions at once, the WebVTT
// made kept by CID), events.go (/api/events, server-sent events), metrics.go
// (HTTP request metrics), search.go (GET /api/search, its limits
// and HasWord), status.go (the answers of /api/providers and /api/peers
// and the data directory's part of /api/status, which the CLI decodes as
// they are), library.go (GET /api/library: the library's lists, paged,
// and their parameters), households.go (GET /api/households and
// /api/households/<peer>/library: the other households and one page of a
// friend's list, asked of it), duplicates.go (GET /api/duplicates: the
// household's files under several paths, and its works held as several
// files, when the Backend is a Deduplicator),
// members.go (/api/members: the household's members, how far each
// watched a file, what to continue and the next episode, when the Backend
// is a Watcher; the member a browser chose, ChosenMember),
// snapshot.go (GET and POST /api/snapshot: the
// export streamed, an upload spooled to a temporary file and imported
// through the Backend's Snapshotter),
// cid.go (GET /api/cid/<cid>, what the page labels CIDs with), web.go
// (the embedded web page under web/, served like /health: index.html at
// /, every other file at its own path with its type; the page's script
// is ES modules under web/js/, main.js the entry, no build step).
//
// Handlers run on net/http's goroutines; Backend implementations must be
// safe for concurrent use. Each /api/events subscriber holds its handler's
// goroutine and one blocking Redis read; Options.MaxSubscribers bounds
// them. Subtitle conversions take one of MaxSubtitleConversions slots
// (a channel), the WebVTT kept is guarded by a mutex. The stranger buckets are shared by all handlers under one mutex,
// held only to take a token.
package api
