// Package storetest starts throwaway Redis servers for tests, with the same
// managed-process code the node uses. Each call gets its own redis-server
// on its own unix socket and data directory, stopped by t.Cleanup.
//
// # Files
//
//   - storetest.go: Dir (a short data directory, for a unix socket),
//     Server (a managed redis-server), New (a Store on its own server),
//     Logger, and Buffer (a log sink safe for concurrent writes).
//   - corpus.go: the search benchmarks' library and queries.
//
// # Goroutines and concurrency
//
// Every helper is safe to call from parallel tests: each gets its own
// redis-server and directory; Buffer guards its bytes with a mutex.
package storetest
