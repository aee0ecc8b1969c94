// Package node wires a MetaMesh node together and runs it: configuration,
// the store (with its managed redis-server), ingest of the libraries and
// the HTTP API. It holds no business rules of its own: those live in
// protocol, store and ingest.
//
// Files: config.go (Config, defaults, Validate), node.go (New, Start,
// Close, Run), backend.go (the api.Backend the HTTP API calls), scan.go
// (one-shot scan).
//
// Requests: every API request bounds its Redis calls to requestTimeout
// (1 s, go-redis retries included, backend.go), so a Redis that is alive
// but does not answer gives a 503 at once instead of holding the client;
// ingest's own calls carry no such deadline and retry with backoff.
//
// Lifecycle: New starts nothing; Start opens the store, starts ingest and
// then the HTTP server; Close is idempotent and stops in reverse order
// (api → ingest → store), returning errors.Join of what failed.
package node
