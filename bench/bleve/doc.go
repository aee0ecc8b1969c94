// Package bleve weighs an embedded full-text index (bleve, on disk as
// the node would keep it under its data directory) on the library and
// queries the node's own search index is timed on
// (store.BenchmarkSearchIndex, storetest.CorpusTitle): make bench runs
// both, and docs/figures.md and docs/design-decisions.md compare them.
// It is a module of its own, so the node does not depend on bleve.
package bleve
