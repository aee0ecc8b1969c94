// Command metamesh is the MetaMesh node binary: it runs a node and offers
// tools around it (hash, cid, scan, fsck). See `metamesh --help`.
//
// It is thin: each subcommand parses its flags into a node.Config or a
// client call and hands it to the packages below; only main calls
// os.Exit.
//
// # Files
//
//   - main.go: main (signals through signal.NotifyContext) and Run, the
//     exit statuses (exitError, usage errors).
//   - root.go: the root command and its global flags; version.go.
//   - run.go: metamesh run; scan.go: metamesh scan (one-shot ingest);
//     fsck.go: metamesh fsck.
//   - client.go: what the commands that talk to a running node share:
//     the flags that find it (--api, --data, the token file) and the GET
//     that decodes its answer into the api package's type of it
//     (apiGetJSON); then one file per command, with how it prints:
//     status.go, lookup.go, providers.go, peers.go, id.go, search.go,
//     health.go, duplicates.go, invite.go (an invite's links and QR code,
//     --list, --revoke; apiCallJSON sends its POST and DELETE),
//     stremio.go (the Stremio add-on's URLs), set.go
//     (set and unset: a PATCH through apiSend, printed as lookup prints).
//   - get.go: metamesh get: its flags, the request of the file on the
//     node the command talks to, and how it prints (the progress bar, the
//     lines of a resume); the download, its resume state and the check
//     against the CID are the fetch package's.
//   - snapshot.go: metamesh export (the snapshot streamed to a
//     temporary file, checked, then renamed) and metamesh import (the
//     file sent as it is; the node checks it whole before it writes).
//   - hash.go: metamesh hash, and cidOrFile: a file where lookup and cid
//     inspect take a CID, hashed for its canonical CID; cid.go: metamesh
//     cid inspect and canonical.
//   - escape.go: controlEscaper, every control character of what the
//     commands print written as an escape.
//
// # Goroutines and concurrency
//
// The main goroutine runs the command; metamesh run starts a node, whose
// goroutines node documents, and stops it when the context ends (the
// first SIGINT or SIGTERM; a second one ends the process). metamesh get
// runs its download (package fetch) on the main goroutine, with the
// goroutines fetch documents (its stall guard's timer; for -o -, the
// hasher of what passes).
package main
