package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
)

// TestStatus_DataDir: metamesh status says where the data directory is
// and how much is free there, that it is full when it is, and each
// problem that keeps the node from being ready, on a line of its own.
func TestStatus_DataDir(t *testing.T) {
	base := api.Status{Version: "dev", Scan: api.ScanProgress{State: "watching"}, Redis: api.RedisStatus{OK: true}}
	for _, tt := range []struct {
		name  string
		edit  func(*api.Status)
		want  []string
		never []string
	}{
		{"room", func(st *api.Status) {
			st.DataDir = api.DataDir{Path: "/srv/metamesh", FreeBytes: 12 << 30, MinFreeBytes: 64 << 20}
			st.Problems = []string{}
		}, []string{"data          /srv/metamesh, 12.0 GiB free\n"}, []string{"problem"}},
		{"full", func(st *api.Status) {
			st.DataDir = api.DataDir{Path: "/srv/metamesh", MinFreeBytes: 64 << 20, Full: true}
			st.Problems = []string{"data directory full: 0 bytes free on /srv/metamesh"}
		}, []string{
			"data          /srv/metamesh, FULL: 0 B free, under the 64.0 MiB the node needs; new files wait until space is freed\n",
			"problem       data directory full: 0 bytes free on /srv/metamesh\n",
		}, nil},
		{"unknown", func(st *api.Status) {
			st.DataDir = api.DataDir{Path: "/srv/metamesh", Error: "free space of /srv/metamesh: permission denied"}
		}, []string{"data          /srv/metamesh (free space unknown: free space of /srv/metamesh: permission denied)\n"}, nil},
		{"an older node", func(*api.Status) {}, nil, []string{"data ", "problem"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := base
			tt.edit(&st)
			var b bytes.Buffer
			if err := printStatus(&b, st, time.Now()); err != nil {
				t.Fatal(err)
			}
			for _, l := range tt.want {
				if !strings.Contains(b.String(), l) {
					t.Errorf("status:\n%s\nwant the line %q", b.String(), l)
				}
			}
			for _, l := range tt.never {
				if strings.Contains(b.String(), l) {
					t.Errorf("status:\n%s\nhas %q", b.String(), l)
				}
			}
		})
	}
}

// TestStatus_Findable: metamesh status says in a household's words
// whether the federation can find it: how many of the households closest
// to a sampled file in each part of the network hold its record, when
// that was checked, and how long ago everything was last announced.
func TestStatus_Findable(t *testing.T) {
	now := time.Date(2026, 5, 1, 11, 30, 0, 0, time.UTC)
	checked := func(prefix string, closest, holding int, at, provided time.Duration) api.ProvidedRegion {
		r := api.ProvidedRegion{Prefix: prefix, Keys: 7, Closest: closest, Holding: holding}
		if at > 0 {
			r.CheckedKey, r.CheckedAt = "QmKey"+prefix, now.Add(-at)
		}
		if provided > 0 {
			r.LastProvidedAt, r.NewestProvidedAt = now.Add(-provided), now.Add(-provided)
		}
		return r
	}
	for _, tt := range []struct {
		name    string
		tokens  int
		regions []api.ProvidedRegion
		want    string
	}{
		{"three parts, two records lost", 25, []api.ProvidedRegion{
			checked("00", 20, 20, 4*time.Minute, 2*time.Hour+10*time.Minute),
			checked("01", 20, 18, 14*time.Minute, time.Hour),
			checked("10", 20, 20, 24*time.Minute, 20*time.Minute),
		}, "the 20 households closest to a sampled file or search word in each of 3 parts of the network hold 58 of 60 records (last check 4 min ago); all announced in the last 3 h"},
		{"one household, one part", 0, []api.ProvidedRegion{checked("", 1, 1, 30*time.Second, 50*time.Second)},
			"the 1 household closest to a sampled file holds 1 of 1 record (last check under a minute ago); all announced in the last minute"},
		{"parts of different sizes", 0, []api.ProvidedRegion{checked("0", 20, 20, time.Hour, time.Hour), checked("1", 17, 9, 3*time.Hour, time.Hour)},
			"the households closest to a sampled file in each of 2 parts of the network hold 29 of 37 records (last check 1 h ago); all announced in the last 2 h"},
		{"not checked yet", 0, []api.ProvidedRegion{checked("", 0, 0, 0, 0)},
			"not checked yet: the first check comes a minute after the node is online; some not announced yet since the start"},
		{"a part not checked, nobody found", 0, []api.ProvidedRegion{checked("0", 0, 0, 3*24*time.Hour, 3*24*time.Hour), checked("1", 0, 0, 0, time.Minute)},
			"the last check found no household close to a sampled file (3 days ago); all announced in the last 4 days"},
		{"nothing announced", 0, []api.ProvidedRegion{}, "nothing announced to check"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := api.ProvideStats{Connectivity: "online", Announced: 10, TokenKeys: tt.tokens, RegionsProvided: tt.regions}
			for _, r := range tt.regions {
				if !r.CheckedAt.IsZero() {
					pr.Findable.Regions++
					pr.Findable.Closest += r.Closest
					pr.Findable.Holding += r.Holding
					if r.CheckedAt.After(pr.Findable.CheckedAt) {
						pr.Findable.CheckedAt = r.CheckedAt
					}
				}
			}
			var b bytes.Buffer
			if err := printStatus(&b, api.Status{Version: "dev", Provide: &pr}, now); err != nil {
				t.Fatal(err)
			}
			if want := "\nfindable      " + tt.want + "\nredis"; !strings.Contains(b.String(), want) {
				t.Errorf("status:\n%s\nwant the line %q", b.String(), want)
			}
			for _, jargon := range []string{"keys", "region", "prefix", "provide", "reprovide"} {
				if strings.Contains(b.String(), jargon) {
					t.Errorf("status says %q:\n%s", jargon, b.String())
				}
			}
		})
	}
}
