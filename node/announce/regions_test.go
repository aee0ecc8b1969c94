package announce

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mh "github.com/multiformats/go-multihash"
)

// keyWithPrefix returns a key (a sha2-256 multihash) whose keyspace key
// starts with the bits of prefix.
func keyWithPrefix(t *testing.T, prefix string, skip int) mh.Multihash {
	t.Helper()
	for i := range 1 << 16 {
		k, err := mh.Sum(fmt.Appendf(nil, "key %d", i), mh.SHA2_256, -1)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(prefixString(keyBits(string(k)), len(prefix)), prefix) {
			if skip == 0 {
				return k
			}
			skip--
		}
	}
	t.Fatalf("no key with prefix %q", prefix)
	return nil
}

// The ledger groups the keystore's keys by their first bits, as many as
// the provider's mean prefix length rounded down: each region's
// lastProvidedAt is its oldest key's last provide (none while a key was
// not provided), its newest the latest; keys that leave the keystore
// leave the regions, and their checks with them.
func TestLedger_Regions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := keyWithPrefix(t, "00", 0), keyWithPrefix(t, "00", 1)
	c, d := keyWithPrefix(t, "01", 0), keyWithPrefix(t, "11", 0)
	l := newLedger()
	l.set([]mh.Multihash{a, b, c, d})
	l.provided(a, t0)
	l.provided(b, t0.Add(time.Minute))
	l.provided(c, t0)
	l.provided([]byte("not a key of the keystore"), t0)

	for _, tt := range []struct {
		name string
		avg  float64
		want string // prefix:keys:oldest:newest, minutes after t0, - for none
	}{
		{"not measured", -1, ":4:-:1"},
		{"one bit", 1.9, "0:3:0:1 1:1:-:-"},
		{"two bits", 2, "00:2:0:1 01:1:0:0 11:1:-:-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs, _ := l.report(tt.avg)
			var got []string
			at := func(x time.Time) string {
				if x.IsZero() {
					return "-"
				}
				return fmt.Sprint(int(x.Sub(t0) / time.Minute))
			}
			for _, r := range rs {
				got = append(got, fmt.Sprintf("%s:%d:%s:%s", r.Prefix, r.Keys, at(r.LastProvidedAt), at(r.NewestProvidedAt)))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("regions %s, want %s", g, tt.want)
			}
		})
	}

	// The rotation: the regions not checked yet first, in prefix order,
	// then the one checked longest ago.
	var order []string
	for i := range 4 {
		k, ok := l.next(2)
		if !ok {
			t.Fatal("no key to check")
		}
		order = append(order, prefixString(keyBits(k), 2))
		l.checked(check{key: k, bits: keyBits(k), at: t0.Add(time.Duration(i) * time.Minute), closest: 20, holding: 19}, 2)
	}
	if got := strings.Join(order, " "); got != "00 01 11 00" {
		t.Errorf("checked the regions in the order %s, want 00 01 11 00", got)
	}
	if _, f := l.report(2); f.Regions != 3 || f.Closest != 60 || f.Holding != 57 || f.Checks != 4 || !f.CheckedAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("findable %+v, want 3 regions, 57 of 60 holding, 4 checks", f)
	}

	l.drop(c)
	rs, f := l.report(2)
	if len(rs) != 2 || rs[1].Prefix != "11" || f.Regions != 2 || len(l.checks) != 2 {
		t.Errorf("after a key left: regions %+v, findable %+v, %d checks kept", rs, f, len(l.checks))
	}
	l.set(nil)
	if rs, f := l.report(2); len(rs) != 0 || f.Regions != 0 || len(l.checks) != 0 || len(l.keys) != 0 {
		t.Errorf("an empty keystore leaves regions %+v, findable %+v", rs, f)
	}
}
