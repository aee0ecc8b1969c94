// Package ingest keeps a node's store in sync with its library
// directories. It scans and watches them, hashes every file into CIDs and
// applies the file lifecycle (arrive, duplicate, collision, change,
// rename/move, delete, restart reconciliation) through the store. It
// never talks to peers and never writes to a library.
//
// # Files
//
//   - ingester.go: Ingester (New, Start, Close, WaitIdle), Scan (one shot).
//   - loop.go: the event loop: fsnotify events, debounce and settle,
//     pairing of moves, watches (ENOSPC fallback to periodic rescans).
//   - scan.go: the full scan and reconciliation with the store.
//   - process.go: the per-path work done by the workers and the retry
//     that pauses ingest while Redis is unreachable.
//   - hash.go: midhash256 and the one-pass sha2-256 + IPFS CID hasher.
//   - extract.go, ffprobe.go, filename.go: metadata extractors.
//   - queue.go, progress.go, skip.go, config.go, errors.go.
//
// # Goroutines and concurrency
//
// One loop goroutine owns the pending (settling) paths, the set of paths
// in flight and the watch list; nothing else touches them. Workers
// (Config.Workers, default one per CPU) take jobs from an unbounded queue
// and report back to the loop, so neither side blocks the other. A path
// is never worked on by two workers at once. A scan runs on its own
// goroutine and hands paths to the loop. The one-pass hasher runs two
// more goroutines per file (whole-file SHA-256 and the UnixFS builder).
//
// # Decisions
//
//   - A file is hashed once no event touched it for Settle and its size
//     and mtime stayed the same between two looks Settle apart.
//   - A move is recognised when a vanished known path and a new path
//     settle together with equal size, mtime and midhash; otherwise it is a
//     delete and an add.
//   - Hidden names (leading dot) and partial downloads (.part, .crdownload,
//     .!qB, .partial, .download, ~) are skipped. Symlinked files count only
//     when they resolve inside a library; symlinked directories are not
//     descended.
//   - Stored paths outside every configured library are left alone (a
//     library removed from the command line is not wiped), and so are the
//     stored paths of a library that is completely empty at scan time (an
//     unmounted drive).
package ingest
