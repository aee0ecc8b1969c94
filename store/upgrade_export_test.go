package store

import "errors"

// Export for tests in store_test: the upgrade's batch size and a hook
// that stops it as a crash would.

// ErrUpgradeStopped is what WithUpgradeStop's hook returns.
var ErrUpgradeStopped = errors.New("upgrade stopped")

// WithUpgradeStop is opts with upgrades that run batches of batch keys
// and stop, as a crash would, after the n-th batch (n 0: never). Tests
// only.
func WithUpgradeStop(opts Options, batch, n int) Options {
	opts.upgrade = upgradeOptions{batch: batch, after: func(b int) error {
		if n > 0 && b == n {
			return ErrUpgradeStopped
		}
		return nil
	}}
	return opts
}
