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
