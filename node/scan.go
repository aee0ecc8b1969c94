package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/store"
)

// Scan ingests the libraries once and returns when the store matches
// them. onProgress, when set, is called about every interval while it
// runs and once at the end.
func Scan(ctx context.Context, cfg Config, interval time.Duration, onProgress func(ingest.Progress)) (ingest.Progress, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return ingest.Progress{}, err
	}
	dropped, err := cfg.absolute()
	if err != nil {
		return ingest.Progress{}, err
	}
	logDropped(cfg.Logger, dropped, cfg.Libraries)
	st, err := store.Open(ctx, store.Options{URL: cfg.RedisURL, DataDir: cfg.DataDir, Logger: cfg.Logger})
	if err != nil {
		return ingest.Progress{}, err
	}
	defer st.Close()
	return ingest.Scan(ctx, st, ingest.Config{Libraries: cfg.Libraries, Workers: cfg.Workers, Settle: cfg.Settle, Logger: cfg.Logger, ProgressInterval: time.Hour}, interval, onProgress)
}

// Fsck opens the store and checks every invariant. With repair it first
// rebuilds the derived indexes (store.Repair, deleting the keys of roots
// that no longer exist) and reports what that changed.
//
// Without a Redis URL it checks the store of the data directory, which
// must hold a node (ErrNoData otherwise: nothing is created). When a node
// is running on it, its redis-server is checked where it runs (Live in
// the report): a violation then counts only when a second pass a second
// later finds it too, since the node may be half-way through a write;
// repair is refused, the running node keeps its indexes itself.
func Fsck(ctx context.Context, cfg Config, repair bool) (FsckReport, error) {
	cfg.SetDefaults()
	var out FsckReport
	if cfg.RedisURL == "" {
		if err := CheckDataDir(cfg.DataDir); err != nil {
			return FsckReport{}, err
		}
		if u, ok := store.RunningServer(ctx, cfg.DataDir); ok {
			if repair {
				return FsckReport{}, fmt.Errorf("%w: a node is running on %s; it keeps its indexes itself: stop it to --repair", store.ErrDataDirInUse, cfg.DataDir)
			}
			cfg.RedisURL, out.Live = u, true
		}
	}
	st, err := store.Open(ctx, store.Options{URL: cfg.RedisURL, DataDir: cfg.DataDir, Logger: cfg.Logger})
	if err != nil {
		return FsckReport{}, err
	}
	defer st.Close()
	if out.Layout, err = st.LayoutVersion(ctx); err != nil {
		return FsckReport{}, err
	}
	if repair {
		r, err := st.Repair(ctx, true)
		if err != nil {
			return FsckReport{}, err
		}
		out.Repaired = &r
	}
	if out.Violations, err = st.Check(ctx); err != nil || !out.Live || len(out.Violations) == 0 {
		return out, err
	}
	select {
	case <-ctx.Done():
		return FsckReport{}, ctx.Err()
	case <-time.After(time.Second):
	}
	again, err := st.Check(ctx)
	if err != nil {
		return FsckReport{}, err
	}
	seen := make(map[store.Violation]bool, len(again))
	for _, v := range again {
		seen[v] = true
	}
	out.Violations = slices.DeleteFunc(out.Violations, func(v store.Violation) bool { return !seen[v] })
	return out, nil
}

// FsckReport is what Fsck found: the store's layout (after the upgrade
// Open runs), what --repair did (nil without it), the violations.
type FsckReport struct {
	Layout     int
	Live       bool // the store of a node running on the data directory
	Repaired   *store.RepairReport
	Violations []store.Violation
}
