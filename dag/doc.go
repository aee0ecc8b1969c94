// Package dag is the UnixFS DAG Kubo builds of a file with its defaults
// for `ipfs add --cid-version=1` (Params: 256 KiB chunks, raw leaves, a
// balanced DAG of 174 links a node, CIDv1 dag-pb over sha2-256), whose
// root is the IPFS CID the node computes of every file (ingest's hasher
// builds it with Params and keeps no block).
//
// Build reads a file once and returns its Index: the root, the leaves as
// byte ranges of the file and the few internal nodes (a 1 GiB file has
// 4,096 leaves and 25 internal nodes: some 400 KB, 0.04% of it). With
// it, Index.Block answers any block of the file's DAG from the file in
// place, never copying it, and never answers a leaf whose bytes no
// longer hash to its CID (ErrChanged): what serving a household's files
// to IPFS peers block by block needs.
//
// # Files
//
//   - dag.go: Params, Build, Index (Block, Bytes), the errors, Discard.
package dag
