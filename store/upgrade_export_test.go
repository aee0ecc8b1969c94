package store

import "errors"

// Export for tests in store_test: the upgrade's batch size and a hook
// that stops it as a crash would.

// ErrUpgradeStopped is what StopUpgradeAfter's hook returns.
var ErrUpgradeStopped = errors.New("upgrade stopped")

// StopUpgradeAfter makes upgrades run batches of batch keys and stop,
// as a crash would, after the n-th batch (n 0: never); the returned
// function undoes it. Tests only; not for parallel tests.
func StopUpgradeAfter(batch, n int) func() {
	oldBatch, oldHook := upgradeBatch, upgradeHook
	upgradeBatch = batch
	upgradeHook = func(b int) error {
		if n > 0 && b == n {
			return ErrUpgradeStopped
		}
		return nil
	}
	return func() { upgradeBatch, upgradeHook = oldBatch, oldHook }
}
