// Package store owns the Redis schema of a MetaMesh node and every
// operation on it, and the managed redis-server child process. It is the
// only package that imports go-redis; it knows nothing of libp2p or HTTP.
//
// # Schema
//
// Everything is a flat key. File properties are STRING keys so keyspace
// notifications fire per field.
//
//	file:<root>/<property…>   STRING  open, flat metadata (title, fileinfo/duration, …)
//	file:<root>/filePath      STRING  primary absolute path (local roots only)
//	file:<root>/sizeByte      STRING  size in bytes
//	file:<root>/mtime         STRING  mtime in Unix nanoseconds
//	file:<root>/cids/<cid>    STRING  "true": the key-set, one key per known CID
//	file:<root>/duplicates    SET     other local paths with the same content
//	cid:<cid>                 STRING  → root: the reverse index, O(1) lookups
//	file:__index__            SET     every root
//	meta:events               STREAM  add | change | delete | rename | reset (MAXLEN ~)
//
// Keys this node adds where the reference schema leaves gaps:
//
//	fields:<root>             SET     names of every STRING field of the root, so a
//	                                  document is read and a root deleted in
//	                                  O(fields), never by SCAN
//	path:<path>               HASH    root, size, mtime (ns), mid (midhash256),
//	                                  hashed ("1" once the full pass is applied):
//	                                  O(1) deletes and renames, and restart
//	                                  reconciliation without re-hashing
//	path:__index__            ZSET    every local path (score 0), so a directory's
//	                                  paths are a lexicographic range (renames
//	                                  and deletes of whole directories)
//	cidalt:<cid>              SET     other roots whose key-set holds <cid> while
//	                                  cid:<cid> points elsewhere (an ambiguous
//	                                  midhash after a collision); when the holder
//	                                  goes, the alias passes to one of them
//
// Roots are UUIDv7 in 26-character Crockford base32 (rootid.go). CIDs are
// always in canonical string form (protocol.ParseStrict); the canonical CID
// of a root is derived on read (Document.CanonicalCID), never stored.
//
// # Atomicity
//
// Every multi-key change (arrive, confirm, change, remove/promote/delete,
// rename, alias, merge) is one Lua script (lua.go), so no reader sees it
// half done and two concurrent arrivals of the same content end as one root
// plus one duplicate. Each lifecycle script appends its event to
// meta:events in the same script.
//
// # Files
//
//   - store.go: Open, Close, options, key names.
//   - server.go: the supervised redis-server (append-only persistence,
//     restart on exit, clean shutdown).
//   - lua.go: the scripts.
//   - ops.go: lifecycle and seed operations (Arrive, Confirm, Change,
//     RemovePath, Rename, Mint, AddAlias, AddDuplicate, GetByCID,
//     MergeIfAliasExists, DeleteRoot).
//   - fields.go, flatten.go, document.go: metadata writes and reads.
//   - paths.go: the path index. events.go: meta:events.
//   - check.go: Check, every schema invariant (fsck; uses SCAN).
//   - rootid.go: root IDs. errors.go: sentinel errors.
//
// # Concurrency
//
// A Store is safe for concurrent use; it holds a go-redis pool. A Server
// runs one supervising goroutine until Close. Request paths (GetByCID,
// Document, Path) never SCAN or KEYS; only Check does.
package store
