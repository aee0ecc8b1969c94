package api

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	tests := []struct {
		remote    string
		want      string
		wantLocal bool
	}{
		{"192.0.2.7:4000", "192.0.2.7", false},
		{"192.0.2.7:4001", "192.0.2.7", false},
		{"[::ffff:192.0.2.7]:4000", "192.0.2.7", false},
		{"[2001:db8:1:2::a]:4000", "2001:db8:1:2::/64", false},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:4000", "2001:db8:1:2::/64", false},
		{"[2001:db8:1:3::a]:4000", "2001:db8:1:3::/64", false},
		{"[fe80::1%eth0]:4000", "fe80::/64", false},
		{"127.0.0.1:4000", "", true},
		{"127.9.9.9:4000", "", true},
		{"[::1]:4000", "", true},
		{"[::ffff:127.0.0.1]:4000", "", true},
		{"pipe", "pipe", false},
	}
	for _, tt := range tests {
		t.Run(tt.remote, func(t *testing.T) {
			got, local := clientKey(tt.remote)
			if got != tt.want || local != tt.wantLocal {
				t.Errorf("clientKey(%q) = %q, %v; want %q, %v", tt.remote, got, local, tt.want, tt.wantLocal)
			}
		})
	}
}

// TestStrangers_Buckets: a client spends its burst, then waits one token's
// time; another client has a bucket of its own.
func TestStrangers_Buckets(t *testing.T) {
	s := newStrangers(StrangerLimits{Rate: 2, Burst: 3}, 100, nil)
	now := time.Unix(1000, 0)
	for i := range 3 {
		if err := s.take("192.0.2.7", FederatedLookup, now); err != nil {
			t.Fatalf("take %d: %v", i+1, err)
		}
	}
	err := s.take("192.0.2.7", FederatedSearch, now)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("take past the burst = %v, want a *RateLimitedError wrapping ErrRateLimited", err)
	}
	if got, want := rl.RetryAfter, 500*time.Millisecond; got != want {
		t.Errorf("RetryAfter %s, want %s (one token at 2/s)", got, want)
	}
	if rl.What != FederatedSearch || rl.Client != "192.0.2.7" || rl.Shared {
		t.Errorf("error %+v, want a search of 192.0.2.7 from its own bucket", rl)
	}
	if err := s.take("192.0.2.8", FederatedLookup, now); err != nil {
		t.Errorf("another address: %v", err)
	}
	if err := s.take("192.0.2.7", FederatedLookup, now.Add(500*time.Millisecond)); err != nil {
		t.Errorf("after RetryAfter: %v", err)
	}
}

// TestStrangers_Bounded: a flood of addresses keeps at most capacity buckets;
// past it new addresses share one, and an address whose bucket filled up
// again gives its place to a new one.
func TestStrangers_Bounded(t *testing.T) {
	const capacity = 4
	s := newStrangers(StrangerLimits{Rate: 1, Burst: 2}, capacity, nil) // refills in 2 s
	now := time.Unix(1000, 0)
	for i := range capacity {
		if err := s.take(fmt.Sprintf("192.0.2.%d", i), FederatedLookup, now); err != nil {
			t.Fatal(err)
		}
	}
	// Every bucket is in use: 1000 new addresses share the overflow one.
	refused := 0
	for i := range 1000 {
		err := s.take(fmt.Sprintf("198.51.%d.%d", i/256, i%256), FederatedLookup, now)
		var rl *RateLimitedError
		if errors.As(err, &rl) {
			refused++
			if !rl.Shared {
				t.Fatalf("address %d refused from a bucket of its own", i)
			}
		}
	}
	if got, want := refused, 1000-2; got != want {
		t.Errorf("%d of 1000 new addresses refused, want %d (they share one bucket of 2)", got, want)
	}
	if got := s.lru.Len(); got != capacity || len(s.byKey) != capacity {
		t.Errorf("%d buckets (%d keys), want %d", got, len(s.byKey), capacity)
	}
	// Once the oldest bucket is full again a new address takes its place.
	later := now.Add(2 * time.Second)
	if err := s.take("203.0.113.1", FederatedLookup, later); err != nil {
		t.Errorf("new address after the oldest refilled: %v", err)
	}
	if _, ok := s.byKey["203.0.113.1"]; !ok {
		t.Error("the new address has no bucket of its own")
	}
	if _, ok := s.byKey["192.0.2.0"]; ok {
		t.Error("the least recently used address kept its bucket")
	}
	if got := s.lru.Len(); got != capacity {
		t.Errorf("%d buckets, want %d", got, capacity)
	}
}

// TestStrangers_None: with Rate 0 every federated request of a stranger
// is refused as forbidden, with no Retry-After.
func TestStrangers_None(t *testing.T) {
	s := newStrangers(StrangerLimits{}, 100, nil)
	err := s.take("192.0.2.7", FederatedLookup, time.Now())
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrRateLimited) {
		t.Fatalf("take = %v, want ErrForbidden", err)
	}
	if got := status(err); got != 403 {
		t.Errorf("status %d, want 403", got)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {90 * time.Second, 90}} {
		if got := retryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("retryAfterSeconds(%s) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
