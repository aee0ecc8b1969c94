// Package node wires a MetaMesh node together and runs it: configuration,
// the store (with its managed redis-server), ingest of the libraries and
// the HTTP API. It holds no business rules of its own: those live in
// protocol, store and ingest.
//
// Files: config.go (Config, defaults, Validate), node.go (New, Start,
// Close, Run), backend.go (the api.Backend the HTTP API calls), scan.go
// (one-shot scan).
//
// Lifecycle: New starts nothing; Start opens the store, starts ingest and
// then the HTTP server; Close is idempotent and stops in reverse order
// (api → ingest → store), returning errors.Join of what failed.
package node
