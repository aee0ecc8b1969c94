package waiting

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records its message and
// ends the goroutine, as the testing package's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs f with a fatalRecorder on a goroutine of its own and
// returns what f failed with ("" when it did not fail).
func failure(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	Recv(t, done, "the wait under test to end")
	return r.msg
}

// countdown is a check that holds from its n-th call on.
func countdown(n int) (cond func() bool, reason func() string) {
	calls := 0
	cond = func() bool { calls++; return calls >= n }
	reason = func() string {
		if cond() {
			return ""
		}
		return "call " + strconv.Itoa(calls)
	}
	return cond, reason
}

func TestFor_Holds(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint("holds at call ", n), func(t *testing.T) {
			cond, _ := countdown(n)
			if got := failure(t, func(tb testing.TB) { For(tb, "the countdown", cond) }); got != "" {
				t.Errorf("For failed: %s", got)
			}
		})
	}
}

func TestUntil_Holds(t *testing.T) {
	_, reason := countdown(3)
	var took time.Duration
	if got := failure(t, func(tb testing.TB) { took = Until(tb, "the countdown", reason) }); got != "" {
		t.Errorf("Until failed: %s", got)
	}
	if took <= 0 {
		t.Errorf("Until took %v, want the time two polls took", took)
	}
}

// A wait that never holds fails with what it waited for, and Until with
// the last reason too (a short limit, set inside the package, so the
// test does not wait Guard).
func TestWait_Fails(t *testing.T) {
	w := wait{limit: 30 * time.Millisecond, every: time.Millisecond}
	for _, tc := range []struct {
		name   string
		reason bool
		want   string
	}{
		{"For", false, "waited 30ms for the impossible"},
		{"Until", true, "waited 30ms for the impossible: still 1 ≠ 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := failure(t, func(tb testing.TB) {
				w.run(tb, "the impossible", func() string { return "still 1 ≠ 2" }, tc.reason)
			})
			if got != tc.want {
				t.Errorf("failed with %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewWait_Options(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want wait
	}{
		{"none", nil, wait{Guard, poll}},
		{"a longer limit", []Option{Limit(5 * time.Minute)}, wait{5 * time.Minute, poll}},
		{"a shorter limit stays at Guard", []Option{Limit(time.Second)}, wait{Guard, poll}},
		{"every", []Option{Every(500 * time.Millisecond)}, wait{Guard, 500 * time.Millisecond}},
		{"both", []Option{Every(time.Second), Limit(30 * time.Minute)}, wait{30 * time.Minute, time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newWait(tc.opts); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
