// Package fetch downloads a file that a running node serves, by its CID
// (GET /api/file/<cid>), and checks its bytes against that CID: what
// metamesh get does apart from its flags and its printing. A Job saves the
// file beside its resume state and renames it once checked (ToFile), or
// writes the bytes out as they come, checked as they pass (ToStdout). It
// finds no node itself: its caller makes the request (Job.Request, with
// the node's address and token), and hears how the download goes through
// a Reporter. It prints nothing.
//
// Its errors are said for the user of metamesh get, its one caller, and
// name that command's flags (-o, --force, --stall) where one would help;
// RefusedError (the node's refusal, with its status) and UnreachableError
// (no answer) let the caller say those in its own words.
//
// # Files
//
//   - job.go: Job, Result and the kinds of CID a download matched;
//     ToFile (where to save, a file in the way, what an earlier attempt
//     left); the names of the resume state (FILE.part, FILE.etag.part,
//     FILE.corrupt.part).
//   - answer.go: the request (Range and If-Range from the saved ETag),
//     the node's refusal, and saving its answer to FILE.part: resumed on
//     a 206, started over on a 200, already whole on a 416.
//   - check.go: the check of the saved bytes against the CID (the
//     hasher of metamesh hash) before the rename, and ToStdout, checked
//     by ingest.StreamHasher as the bytes pass.
//   - headers.go: the parsers of the answer's headers: the name to save
//     under (Content-Disposition, cleaned to a base name with no control
//     character, short enough for a file system) and Content-Range.
//   - stall.go: the stall guard, the only limit on a download's time.
//   - report.go: Reporter and Progress, how the caller hears of a
//     download.
//   - errors.go: RefusedError, UnreachableError.
//
// # Goroutines and concurrency
//
// A Job runs on its caller's goroutine, and calls its Reporter from it.
// Each request has a stall guard whose timer (time.AfterFunc) cancels the
// request's context from a goroutine of its own when the node sent
// nothing for Job.Stall; the guard's state is atomic. ToStdout hashes
// the bytes on ingest.StreamHasher's goroutine (and the two of its
// one-pass hasher). Two Jobs on the same FILE at once are not locked
// against: a resume that finds FILE.part changed under it stops.
//
// # Rules
//
//   - No time limit but the stall guard: a file from peers may take
//     minutes.
//   - The bytes go to FILE.part and take FILE's name only once they match
//     the CID; a file at FILE is replaced only with Job.Force, and never
//     when it is not a regular file (a device, a FIFO, a symbolic link).
//   - A resume asks only for the bytes after those FILE.part holds, and
//     only while the node's ETag is the one saved with them (If-Range):
//     otherwise the node sends the whole file and the download starts
//     over. Bytes that do not match are moved to FILE.corrupt.part, so
//     that the next attempt starts anew.
//   - Every name of the state ends in .part, which the node never
//     ingests: saving into a library adds only the checked file to it.
//   - The node's name for the file is taken as its base name only, never
//     outside the directory, with no control character.
package fetch
