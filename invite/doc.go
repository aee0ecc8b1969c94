// Package invite keeps the household's invites: one-time codes that let
// one browser of another device in, and the browser sessions they are
// exchanged for. A code is used once and expires; the session it opens
// lasts until it is revoked. Neither the codes nor the session secrets
// are kept: only their SHA-256, in one JSON file of the data directory
// (DATA/invites.json, mode 0600, replaced whole on every change), so a
// copy of the file lets no one in and the sessions outlive a restart.
//
// It knows nothing of HTTP: package api sets the cookie and checks it
// through a Store.
//
// # Files
//
//   - store.go: Store (Open, Create, Redeem, Session, List, Revoke,
//     RevokeAll), Entry, and the file it is kept in.
//   - errors.go: the sentinel errors of Redeem and Revoke.
//
// # Concurrency
//
// A Store is safe for concurrent use: one mutex guards the entries and
// the file's writes. Session, called on every request a browser makes,
// only reads under it, and writes the file when an entry's last use
// moved by more than LastUsedResolution.
package invite
