// Package protocol is the network contract of a MetaMesh node, kept pure and
// free of I/O.
//
// It owns the rules every peer must agree on byte for byte:
//
//   - cid.go: strict parsing of the canonical CID string form (CIDv1, multibase
//     base32 lower) and normalisation of friendlier input (CIDv0, other
//     multibases) for the API and CLI.
//   - rank.go: the rank ladder that elects a file's canonical CID (Rank,
//     Better, Canonical) and Inspect, which describes one CID.
//   - midhash.go: the midhash256 definition, an O(1) content address.
//   - errors.go: the package's sentinel errors.
//
// Nothing here starts goroutines or keeps state; every function is safe for
// concurrent use.
package protocol
