package ingest

import (
	"context"

	"github.com/metamesh/node/store"
)

// Store is what ingest asks of the store; *store.Store is the one
// implementation. Every method may be called from several workers at
// once. Ingest serialises the work on each path itself (a path is never
// worked on by two jobs at once), so the store need not.
type Store interface {
	// The path index.
	Path(ctx context.Context, path string) (store.PathState, error)
	Paths(ctx context.Context, paths []string) (map[string]store.PathState, error)
	PathsAfter(ctx context.Context, after string, limit int) ([]string, error)
	PathsOfInode(ctx context.Context, dev, ino uint64) ([]string, error)
	PathsUnder(ctx context.Context, dir string) ([]string, error)
	PathsWithPrefixes(ctx context.Context, prefixes []string, limit int) ([][]string, error)

	// The file lifecycle.
	Arrive(ctx context.Context, f store.FileStat, midhash string) (store.Outcome, error)
	Ingest(ctx context.Context, f store.FileStat, h store.Hashes, m store.Meta) (store.Outcome, int, error)
	IngestBatch(ctx context.Context, items []store.IngestItem) ([]store.IngestResult, error)
	Change(ctx context.Context, f store.FileStat, h store.Hashes, m store.Meta) (store.Outcome, error)
	SetExtracted(ctx context.Context, path string, m store.Meta) (store.Outcome, int, error)
	Replace(ctx context.Context, oldPath, newPath string) (store.Outcome, error)
	RemovePath(ctx context.Context, path string) (store.Outcome, error)

	// Reads of what a file's links point at, and the change feed.
	Document(ctx context.Context, root store.RootID) (store.Document, error)
	CanonicalCIDs(ctx context.Context, roots []store.RootID, cids []string) (map[store.RootID]string, map[string]string, error)
	AppendEvent(ctx context.Context, e store.Event) error
}

var _ Store = (*store.Store)(nil)
