package store

import (
	"sort"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestRootID_Layout(t *testing.T) {
	now := time.UnixMilli(1_750_000_000_123)
	var g rootGen
	id := g.next(now)
	if len(id) != 26 {
		t.Fatalf("len = %d, want 26", len(id))
	}
	u := ulid.MustParseStrict(string(id))
	if got := u.Time(); got != uint64(now.UnixMilli()) {
		t.Errorf("timestamp = %d, want %d", got, now.UnixMilli())
	}
	if v := u[6] >> 4; v != 7 {
		t.Errorf("version = %d, want 7", v)
	}
	if v := u[8] >> 6; v != 0b10 {
		t.Errorf("variant = %02b, want 10", v)
	}
	if _, err := ParseRootID(string(id)); err != nil {
		t.Errorf("ParseRootID(own id) = %v", err)
	}
	if !id.Time().Equal(now) {
		t.Errorf("Time() = %v, want %v", id.Time(), now)
	}
}

func TestRootID_SortsByMintOrder(t *testing.T) {
	var g rootGen
	base := time.UnixMilli(1_750_000_000_000)
	var ids []string
	for i := 0; i < 10000; i++ {
		// many in the same millisecond, then a step forward, then a clock
		// that goes backwards: order must still follow mint order.
		at := base.Add(time.Duration(i/3000) * time.Millisecond)
		if i == 9000 {
			at = base
		}
		ids = append(ids, string(g.next(at)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("root IDs do not sort by mint order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate root id %s", id)
		}
		seen[id] = true
	}
}

func TestParseRootID_Rejects(t *testing.T) {
	for _, s := range []string{"", "short", ulid.Make().String() /* ULID, random version bits */, "01JKR8XW5T4QMV7AHNJ2DEFGH!"} {
		if _, err := ParseRootID(s); err == nil && s != "" {
			u := ulid.MustParseStrict(s)
			if u[6]>>4 == 7 && u[8]>>6 == 2 {
				continue // a random ULID can look like a UUIDv7 by chance
			}
			t.Errorf("ParseRootID(%q) accepted", s)
		} else if err == nil {
			t.Errorf("ParseRootID(%q) accepted", s)
		}
	}
}
