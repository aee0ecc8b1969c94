package waiting

import (
	"testing"
	"time"
)

// Option changes how long or how often For and Until poll.
type Option func(*wait)

// Limit lets a wait go on past Guard, up to d, for a case that needs
// more: the compose testnet's bulk ingest, a simulation of hundreds of
// households providing their keys. A d shorter than Guard leaves the
// wait at Guard: no wait on a node is shorter.
func Limit(d time.Duration) Option {
	return func(w *wait) { w.limit = max(d, Guard) }
}

// Every sets how often a wait looks again (20 ms unless set), for a
// check that costs: a sweep of HTTP requests to every container of a
// testnet, a DHT walk.
func Every(d time.Duration) Option {
	return func(w *wait) { w.every = d }
}

// wait is how one call of For or Until polls: for how long at most, and
// how often.
type wait struct {
	limit, every time.Duration
}

// newWait is Guard and poll, changed by opts in order.
func newWait(opts []Option) wait {
	w := wait{limit: Guard, every: poll}
	for _, o := range opts {
		o(&w)
	}
	return w
}

// run calls check until it returns "" and returns how long that took;
// once w.limit has passed it fails tb with what, and with check's last
// answer when reason is set.
func (w wait) run(tb testing.TB, what string, check func() string, reason bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for {
		last := check()
		if last == "" {
			return time.Since(start)
		}
		if time.Since(start) >= w.limit {
			if reason {
				tb.Fatalf("waited %v for %s: %s", w.limit, what, last)
			} else {
				tb.Fatalf("waited %v for %s", w.limit, what)
			}
			return time.Since(start)
		}
		time.Sleep(w.every)
	}
}
