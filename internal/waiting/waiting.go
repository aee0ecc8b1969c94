package waiting

import (
	"context"
	"testing"
	"time"
)

// Guard bounds every wait: a hang detector, not a timing check.
const Guard = 2 * time.Minute

// poll is how often a wait looks again unless Every says otherwise.
const poll = 20 * time.Millisecond

// For polls cond until it holds, failing tb with what it waited for once
// Guard (or the Limit given) has passed.
func For(tb testing.TB, what string, cond func() bool, opts ...Option) {
	tb.Helper()
	check := func() string {
		if cond() {
			return ""
		}
		return "not yet"
	}
	newWait(opts).run(tb, what, check, false)
}

// Until polls check until it returns "", failing tb with what it waited
// for and the last reason check gave (why it was not yet true) once
// Guard (or the Limit given) has passed. It returns how long the wait
// took, for a test that reports how long a testnet took to converge.
func Until(tb testing.TB, what string, check func() string, opts ...Option) time.Duration {
	tb.Helper()
	return newWait(opts).run(tb, what, check, true)
}

// Context is a context that ends once Guard has passed (or the test
// ended), for a call that waits itself (WaitIdle, a lookup).
func Context(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	tb.Cleanup(cancel)
	return ctx
}

// Recv returns the next value from ch, failing tb with what it waited
// for once Guard has passed; ok is false when ch was closed.
func Recv[T any](tb testing.TB, ch <-chan T, what string) (v T, ok bool) {
	tb.Helper()
	select {
	case v, ok = <-ch:
		return v, ok
	case <-time.After(Guard):
		tb.Fatalf("waited %v for %s", Guard, what)
		return v, false
	}
}

// After is a channel that fires once Guard has passed, for a select that
// waits on several things at once.
func After() <-chan time.Time { return time.After(Guard) }
