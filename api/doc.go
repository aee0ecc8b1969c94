// Package api serves the node's HTTP API: JSON handlers, the error shape
// ({"error": "..."} with a fitting status) and routing. It never reaches
// Redis: everything goes through the Backend interface, which the node
// satisfies.
//
// Files: server.go (routes, handlers), errors.go (error → status mapping),
// param.go (parsing of untrusted path and query input).
//
// Handlers run on net/http's goroutines; Backend implementations must be
// safe for concurrent use.
package api
