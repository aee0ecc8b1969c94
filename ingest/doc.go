// Package ingest keeps a node's store in sync with its library
// directories. It scans and watches them, hashes every file into CIDs and
// applies the file lifecycle (arrive, duplicate, collision, change,
// rename/move, delete, restart reconciliation) through the store. It
// never talks to peers and never writes to a library but for one marker
// file in its root (available.go).
//
// # Files
//
//   - ingester.go: Ingester (New, Start, Close, WaitIdle), Scan (one shot).
//   - loop.go: the event loop: debounce and settle, jobs handed to the
//     workers and their results taken back; watch.go: its directory
//     watches, fsnotify events turned into paths to settle, watches
//     added and removed as directories and libraries come and go (ENOSPC
//     fallback to periodic rescans), and the events on the caller's
//     marker files told to Config.OnMarker. Neither calls the store or
//     reads a file's contents (stat, walk and watch calls only).
//   - settle.go: pairing settled paths into moves and atomic replaces, and
//     listing the stored paths under a removed directory, on a worker.
//   - scan.go: the full scan and reconciliation with the store; after a
//     restart, the new paths it finds are paired with the stored ones it
//     does not find into moves (movesOf, then settle.go).
//   - worker.go: the workers, each job's run, and how a path's work
//     ended (retried once it settles, counted as an error, or done).
//   - lifecycle.go: one path's lifecycle (arrive, change, rename,
//     remove), a new or changed file in at most two round trips to the
//     store (the file's comment lists them).
//   - passes.go: the reads of a file's bytes: the midhash's samples, the
//     full pass, a small file read whole once; each checks that the file
//     did not change while it was read.
//   - retry.go: the retry that pauses ingest while Redis is unreachable.
//   - batch.go: settled scan paths in batches: small new files read once
//     and sent to the store a chunk per round trip.
//   - hash.go: midhash256 and the one-pass sha2-256 + IPFS CID hasher.
//   - streamhash.go: StreamHasher, the same three CIDs of bytes that
//     pass and are not kept (metamesh get -o -): the one-pass hasher on
//     a goroutine of its own, the midhash from its sample as it passes.
//   - extract.go: the extractors' interface, running them on a file,
//     and when a primary's metadata is extracted again; ffprobe.go,
//     filename.go, nfo.go: metadata extractors
//     (nfo.go: the Kodi NFO format, NFOReader); sidecars.go: a video's
//     subtitle and artwork links, found through the store's path index;
//     relink.go: a sidecar's videos, and their links written again.
//   - the release-name parser: names_scan.go (one path component's
//     tokens and bracket groups), names_tokens.go (the tokenizer and the
//     vocabulary of technical tokens), names_episodes.go (episode and
//     season markers), names_parse.go (where the title ends, which year
//     and marker count), names_title.go (titles as shown),
//     names_folders.go (season and title from parent folders),
//     names_home.go (home videos: a camera's word and a counter or a
//     date, read before any other rule, without allocating),
//     names_anime.go (anime's marks, the titles' script, "第01話",
//     "2nd Season").
//   - changes.go: the changes applied, by the watcher or a scan (but
//     for a first ingest's), told at Info whenever the loop goes idle
//     ("added Films/a.mkv", "renamed a → b", "added 240 files: a, b, c,
//     …"), paths relative to their library; each one, a first ingest's
//     too, told at once to Config.OnApplied.
//   - touch.go: Touch, a caller's request to look at a path again;
//     Rehash, to hash it again whatever its size and mtime say.
//   - store.go: Store, what ingest asks of the store (*store.Store).
//   - open.go: the library boundary, OpenInLibrary: every library file
//     the node reads is opened there (regular files only, never out of
//     its library, never blocking on the open); and the ingester's
//     file system (fileSystem: each read's open and each directory
//     watch), which tests wrap to fail, block or change a file at one
//     read.
//   - available.go: whether each library is there (its root looked at
//     every Config.LibraryCheck, bounded by Config.LibraryTimeout; its
//     marker file, MarkerName; device and inode), Libraries,
//     ErrLibraryUnavailable; an unavailable library is neither watched,
//     walked nor deleted from, and is rescanned when it comes back.
//   - busy.go: the jobs the workers run now, for Stuck and Close.
//   - queue.go, progress.go, errset.go, skip.go, config.go, errors.go,
//     util.go (small number helpers).
//
// # Goroutines and concurrency
//
// One loop goroutine owns the pending (settling) paths, the set of paths
// in flight and the watch list; nothing else touches them. Whatever needs
// the store or a file's bytes goes to a worker as a job, and its result
// (paths to look at again, jobs that follow) comes back to the loop. Workers
// (Config.Workers, default one per CPU) take jobs from an unbounded queue
// and report back to the loop, so neither side blocks the other. A path
// is never worked on by two workers at once: a video's links are read
// and written again (jobRelink) only while no other job holds it, after
// every sidecar that asked for that is stored. A scan runs on its own
// goroutine and hands paths to the loop. The one-pass hasher runs two
// more goroutines per file (whole-file SHA-256 and the UnixFS builder).
//
// # Decisions
//
//   - A file is hashed once no event touched it for Settle and its size
//     and mtime stayed the same between two looks Settle apart.
//   - A move is recognised when a vanished known path and a new path
//     settle together and are the same file (device, inode, size, mtime),
//     or, across file systems, have equal size, mtime and midhash;
//     otherwise it is a delete and an add. A path that vanishes while a
//     job still holds it (its arrival being hashed and stored) is waited
//     for by a new path of the same size and mtime, however long the
//     job runs, so a move during a slow arrival stays a move; no other
//     path waits for it. A move onto a known path is an
//     atomic replace (store.Replace). A change seen through one hard link
//     re-checks the others.
//   - Empty files are not content and are not ingested.
//   - Extraction runs when a path is a primary whose recorded extraction
//     version is older than extractVersion (NameParserVersion), so a newer
//     parser re-extracts on the next scan without re-hashing.
//   - A sidecar (an NFO, a subtitle, artwork) added, changed, moved or
//     removed re-reads the names, NFOs and links of the videos it belongs
//     to (relink): those fields only, without reading or hashing the
//     videos. A sidecar the scan finds unchanged relinks nothing, even
//     when its own metadata is extracted again.
//   - Close waits at most Config.StopWait for workers blocked on a
//     file (a hung mount), then returns and logs what it left; Stuck
//     reports a job that has run Config.StuckAfter without a byte
//     hashed (the node is then not ready).
//   - Hidden names (leading dot) and partial downloads (.part, .crdownload,
//     .!qB, .partial, .download, ~) are skipped. Symlinked files count only
//     when they resolve inside their own library; symlinked directories
//     are not descended.
//   - With Config.ReleaseOutside (a running node), stored paths under no
//     configured library are released; a one-off scan of some libraries
//     leaves the others alone.
//   - Only files that vanish from an available library are deleted. A
//     library whose root is gone, does not answer, lost its marker or
//     (with no marker) changed device or inode is unavailable, and so is
//     one a scan finds completely empty while the store knows files in
//     it, unless its marker vouches it was emptied on purpose (an
//     unmounted drive far more often than an emptied library).
package ingest
