package waiting

import (
	"context"
	"testing"
	"time"
)

// Guard bounds every wait: a hang detector, not a timing check.
const Guard = 2 * time.Minute

// poll is how often For looks again.
const poll = 20 * time.Millisecond

// For polls cond until it holds, failing tb with what it waited for once
// Guard has passed.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Guard)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", Guard, what)
		}
		time.Sleep(poll)
	}
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
