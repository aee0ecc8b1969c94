package node

import (
	"context"
	"errors"
	"io"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

// ExportSnapshot writes the store's snapshot (api.Snapshotter).
func (b *backend) ExportSnapshot(ctx context.Context, w io.Writer, localOnly bool) error {
	_, err := b.n.st.ExportSnapshot(ctx, w, store.ExportOptions{Peer: b.n.p2p.Host().ID().String(), LocalOnly: localOnly})
	return err
}

// ImportSnapshot applies a snapshot (api.Snapshotter); a snapshot the
// store refuses is a bad request, in the store's words (the line).
func (b *backend) ImportSnapshot(ctx context.Context, open func() (io.ReadCloser, error), o api.SnapshotImport) (api.SnapshotReport, error) {
	opts := store.ImportOptions{Mode: store.ImportMerge, DryRun: o.DryRun}
	if o.Replace {
		opts.Mode = store.ImportReplace
	}
	for _, m := range o.MapPath {
		opts.MapPath = append(opts.MapPath, store.PathMap{Old: m[0], New: m[1]})
	}
	rep, err := b.n.st.ImportSnapshot(ctx, open, opts)
	if errors.Is(err, store.ErrBadSnapshot) {
		return api.SnapshotReport{}, badSnapshot{err}
	}
	if err != nil {
		return api.SnapshotReport{}, err
	}
	return api.SnapshotReport{Mode: string(rep.Mode), DryRun: rep.DryRun, Roots: rep.Roots, Added: rep.Added,
		Changed: rep.Changed, Unchanged: rep.Unchanged, Removed: rep.Removed, SHA256: rep.SHA256}, nil
}

// badSnapshot is a refused snapshot: a bad request (400) whose message
// is the store's.
type badSnapshot struct{ err error }

func (e badSnapshot) Error() string   { return e.err.Error() }
func (e badSnapshot) Unwrap() []error { return []error{api.ErrBadRequest, e.err} }

var _ api.Snapshotter = (*backend)(nil)
