package node

import (
	"context"
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
func Fsck(ctx context.Context, cfg Config, repair bool) (FsckReport, error) {
	cfg.SetDefaults()
	st, err := store.Open(ctx, store.Options{URL: cfg.RedisURL, DataDir: cfg.DataDir, Logger: cfg.Logger})
	if err != nil {
		return FsckReport{}, err
	}
	defer st.Close()
	var out FsckReport
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
	out.Violations, err = st.Check(ctx)
	return out, err
}

// FsckReport is what Fsck found: the store's layout (after the upgrade
// Open runs), what --repair did (nil without it), the violations.
type FsckReport struct {
	Layout     int
	Repaired   *store.RepairReport
	Violations []store.Violation
}
