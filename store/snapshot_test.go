package store_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// snapshotFixture fills s with a local file and its duplicate (fields of
// the household's, a supplied member, a peer's claim and member), a
// second local file, a file not hashed yet and a root known only from
// a peer.
func snapshotFixture(tb testing.TB, s *store.Store) {
	tb.Helper()
	a := ingest(tb, s, stat("/lib/a.mkv", 100), content{1, 1})
	ingest(tb, s, stat("/lib/b.mkv", 100), content{1, 1})
	ingest(tb, s, stat("/lib/c.mkv", 200), content{2, 2})
	if _, err := s.Arrive(ctx, stat("/lib/d.mkv", 300), content{3, 3}.hashes().Midhash); err != nil {
		tb.Fatal(err)
	}
	must[int](tb)(s.SetFields(ctx, a.Root, map[string]string{"title": "A", "tmdb/id": "1"}))
	// The household's edit of a field: a snapshot keeps it an edit.
	if _, _, err := s.Edit(ctx, content{1, 1}.hashes().SHA256, map[string]string{"videoType": "other"}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := s.AddAlias(ctx, a.Root, strongCID(10)); err != nil {
		tb.Fatal(err)
	}
	merge(tb, s, peerA, []string{content{1, 1}.hashes().SHA256, strongCID(11)}, map[string]string{"title": "A by a peer"})
	merge(tb, s, peerB, []string{strongCID(20), weakCID(21)}, map[string]string{"title": "only a peer's"})
	mustCheck(tb, s)
}

// exportSnapshot is s's snapshot.
func exportSnapshot(tb testing.TB, s *store.Store, localOnly bool) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if _, err := s.ExportSnapshot(ctx, &buf, store.ExportOptions{Peer: "12D3KooWself", LocalOnly: localOnly}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func importSnapshot(s *store.Store, data []byte, opts store.ImportOptions) (store.ImportReport, error) {
	return s.ImportSnapshot(ctx, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, opts)
}

// documents are s's documents read by each CID of each root (roots
// aside: they are the store's own names).
func documents(tb testing.TB, s *store.Store) map[string]store.Document {
	tb.Helper()
	out := make(map[string]store.Document)
	for _, r := range must[[]store.RootID](tb)(s.RootIDs(ctx)) {
		d := must[store.Document](tb)(s.Document(ctx, r))
		for _, c := range d.CIDs {
			byCID := must[store.Document](tb)(s.DocumentByCID(ctx, c))
			byCID.Root = ""
			out[c] = byCID
		}
	}
	return out
}

// snapshotLines and packSnapshot take a snapshot apart and put it
// together again, to cut or alter it.
func snapshotLines(tb testing.TB, data []byte) []string {
	tb.Helper()
	gz := must[*gzip.Reader](tb)(gzip.NewReader(bytes.NewReader(data)))
	raw := must[[]byte](tb)(io.ReadAll(gz))
	return strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
}

func packSnapshot(lines []string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	_, _ = io.WriteString(gz, strings.Join(lines, ""))
	_ = gz.Close()
	return buf.Bytes()
}

func TestSnapshot_RoundTrip(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	data := exportSnapshot(t, src, false)
	dst := storetest.New(t)
	rep := must[store.ImportReport](t)(importSnapshot(dst, data, store.ImportOptions{Mode: store.ImportMerge}))
	mustCheck(t, dst)
	if rep.Roots != 4 || rep.Added != 4 || rep.Changed != 0 || rep.Removed != 0 {
		t.Errorf("report %+v, want 4 roots added", rep)
	}
	if got, want := documents(t, dst), documents(t, src); !reflect.DeepEqual(got, want) {
		t.Errorf("imported documents\n%+v\nwant\n%+v", got, want)
	}
	// Again: nothing is missing, nothing is written.
	before := must[map[string]string](t)(dst.DebugDump(ctx))
	rep = must[store.ImportReport](t)(importSnapshot(dst, data, store.ImportOptions{Mode: store.ImportMerge}))
	if rep.Unchanged != 4 || rep.Added+rep.Changed != 0 {
		t.Errorf("second import %+v, want 4 unchanged", rep)
	}
	if after := must[map[string]string](t)(dst.DebugDump(ctx)); !reflect.DeepEqual(withoutFeed(before), withoutFeed(after)) {
		t.Errorf("a second import wrote to the store")
	}
}

// withoutFeed drops the change feed, which a repeat merge may append to.
func withoutFeed(dump map[string]string) map[string]string {
	out := make(map[string]string, len(dump))
	for k, v := range dump {
		if k != "meta:events" {
			out[k] = v
		}
	}
	return out
}

func TestSnapshot_Refused(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	good := snapshotLines(t, exportSnapshot(t, src, false))
	n := len(good)
	alter := func(i int, from, to string) []byte {
		l := append([]string(nil), good...)
		if i < 0 { // the line that holds from
			i = slices.IndexFunc(l, func(s string) bool { return strings.Contains(s, from) })
		}
		l[i] = strings.Replace(l[i], from, to, 1)
		return packSnapshot(l)
	}
	full := packSnapshot(good)
	tests := []struct {
		name string
		data []byte
		line string
	}{
		{"truncated before the trailer", packSnapshot(good[:n-1]), "line " + strconv.Itoa(n)},
		{"a root line dropped", packSnapshot(append(append([]string(nil), good[:2]...), good[3:]...)), "line " + strconv.Itoa(n-1)},
		{"an altered value", alter(-1, `"title":"A"`, `"title":"B"`), "line " + strconv.Itoa(n)},
		{"a line that does not parse", alter(3, `{`, `{x`), "line 4"},
		{"a wrong version", alter(0, `"version":1`, `"version":2`), "line 1"},
		{"cut gzip", full[:len(full)/2], "line"},
		{"not gzip", []byte("{}\n"), "line 1"},
	}
	dst := storetest.New(t)
	ingest(t, dst, stat("/lib/mine.mkv", 7), content{7, 7})
	before := must[map[string]string](t)(dst.DebugDump(ctx))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []store.ImportMode{store.ImportMerge, store.ImportReplace} {
				_, err := importSnapshot(dst, tt.data, store.ImportOptions{Mode: mode})
				var se *store.SnapshotError
				if !errors.As(err, &se) || !errors.Is(err, store.ErrBadSnapshot) || !strings.Contains(err.Error(), tt.line) {
					t.Fatalf("%s: error %v, want a SnapshotError at %s", mode, err, tt.line)
				}
			}
			if after := must[map[string]string](t)(dst.DebugDump(ctx)); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused snapshot changed the store")
			}
		})
	}
}

func TestSnapshot_Modes(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	data := exportSnapshot(t, src, false)
	tests := []struct {
		name  string
		setup func(t *testing.T, s *store.Store)
		opts  store.ImportOptions
		want  store.ImportReport
		check func(t *testing.T, s *store.Store, before map[string]string)
	}{
		{
			name: "dry run writes nothing",
			setup: func(t *testing.T, s *store.Store) {
				ingest(t, s, stat("/lib/other.mkv", 9), content{9, 9})
			},
			opts: store.ImportOptions{Mode: store.ImportReplace, DryRun: true},
			want: store.ImportReport{Added: 4, Removed: 1},
			check: func(t *testing.T, s *store.Store, before map[string]string) {
				if after := must[map[string]string](t)(s.DebugDump(ctx)); !reflect.DeepEqual(before, after) {
					t.Errorf("a dry run changed the store")
				}
			},
		},
		{
			name: "replace removes roots not in the snapshot",
			setup: func(t *testing.T, s *store.Store) {
				ingest(t, s, stat("/lib/other.mkv", 9), content{9, 9})
				a := ingest(t, s, stat("/lib/a.mkv", 100), content{1, 1})
				must[int](t)(s.SetFields(ctx, a.Root, map[string]string{"title": "Mine"}))
			},
			opts: store.ImportOptions{Mode: store.ImportReplace},
			want: store.ImportReport{Added: 3, Changed: 1, Removed: 1},
			check: func(t *testing.T, s *store.Store, _ map[string]string) {
				if got, want := documents(t, s), documents(t, src); !reflect.DeepEqual(got, want) {
					t.Errorf("after replace\n%+v\nwant\n%+v", got, want)
				}
			},
		},
		{
			name: "merge keeps existing values",
			setup: func(t *testing.T, s *store.Store) {
				a := ingest(t, s, stat("/lib/a.mkv", 100), content{1, 1})
				must[int](t)(s.SetFields(ctx, a.Root, map[string]string{"title": "Mine"}))
			},
			opts: store.ImportOptions{Mode: store.ImportMerge},
			want: store.ImportReport{Added: 3, Changed: 1},
			check: func(t *testing.T, s *store.Store, _ map[string]string) {
				d := must[store.Document](t)(s.DocumentByCID(ctx, content{1, 1}.hashes().SHA256))
				if d.Fields["title"] != "Mine" || d.Fields["tmdb/id"] != "1" || d.Fields["origin/"+peerA+"/title"] != "A by a peer" {
					t.Errorf("fields after merge %v: want title Mine kept, tmdb/id and the peer's claim added", d.Fields)
				}
				if len(d.Duplicates) != 1 || !d.Vouches(strongCID(10)) || d.Vouches(strongCID(11)) {
					t.Errorf("after merge %+v: want the duplicate, the supplied member vouched, the peer's learned", d)
				}
			},
		},
		{
			name: "map_path rewrites paths",
			opts: store.ImportOptions{Mode: store.ImportMerge, MapPath: []store.PathMap{{Old: "/lib", New: "/media/films"}}},
			want: store.ImportReport{Added: 4},
			check: func(t *testing.T, s *store.Store, _ map[string]string) {
				d := must[store.Document](t)(s.DocumentByCID(ctx, content{1, 1}.hashes().SHA256))
				if d.FilePath() != "/media/films/a.mkv" || !reflect.DeepEqual(d.Duplicates, []string{"/media/films/b.mkv"}) {
					t.Errorf("paths %s %v, want them under /media/films", d.FilePath(), d.Duplicates)
				}
				if _, err := s.Path(ctx, "/lib/a.mkv"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("old path: %v, want not found", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.New(t)
			if tt.setup != nil {
				tt.setup(t, s)
			}
			before := must[map[string]string](t)(s.DebugDump(ctx))
			rep := must[store.ImportReport](t)(importSnapshot(s, data, tt.opts))
			got := store.ImportReport{Added: rep.Added, Changed: rep.Changed, Removed: rep.Removed}
			if got != tt.want {
				t.Errorf("report %+v, want %+v", rep, tt.want)
			}
			mustCheck(t, s)
			tt.check(t, s, before)
		})
	}
}

func TestSnapshot_LocalOnly(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	dst := storetest.New(t)
	rep := must[store.ImportReport](t)(importSnapshot(dst, exportSnapshot(t, src, true), store.ImportOptions{Mode: store.ImportMerge}))
	mustCheck(t, dst)
	if rep.Roots != 3 {
		t.Errorf("local_only snapshot has %d roots, want the 3 local ones", rep.Roots)
	}
	for c, d := range documents(t, dst) {
		if len(d.Peers) > 0 || len(d.Learned) > 0 || !d.Local() {
			t.Errorf("%s: %+v carries peers' data", c, d)
		}
		for f := range d.Fields {
			if strings.HasPrefix(f, "origin/") {
				t.Errorf("%s: peer's field %s", c, f)
			}
		}
	}
	if _, err := dst.GetByCID(ctx, strongCID(11)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a member learned from a peer: %v, want not found", err)
	}
}

func FuzzSnapshotRoot(f *testing.F) {
	f.Add([]byte(`{"root":"01JABCDEFGHJKMNPQRSTVWXYZ0","fields":{"title":"x"},"cids":["bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"]}` + "\n"))
	f.Add([]byte(`{"end":true,"roots":0,"sha256":""}`))
	f.Add([]byte(`{"root":"01JABCDEFGHJKMNPQRSTVWXYZ0","fields":{"filePath":"/a"},"cids":[],"paths":[{"path":"/a","primary":true}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := store.ParseSnapshotRoot(b)
		if err != nil {
			return
		}
		if len(r.CIDs) == 0 || len(r.Root) != 26 {
			t.Fatalf("accepted %q as %+v", b, r)
		}
	})
}

// resealed is a snapshot of lines (header and root lines) with its
// trailer computed anew: a valid snapshot of fewer roots.
func resealed(lines []string) []byte {
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	trailer := fmt.Sprintf(`{"end":true,"roots":%d,"sha256":"%s"}`+"\n", len(lines)-1, hex.EncodeToString(sum[:]))
	return packSnapshot(append(append([]string(nil), lines...), trailer))
}

// TestSnapshot_FinishesOnTheNextRun: an import stopped after some roots
// (the store as a killed import leaves it: those roots written, the
// journal key still there) is finished by running it again, in either
// mode.
func TestSnapshot_FinishesOnTheNextRun(t *testing.T) {
	src := storetest.New(t)
	snapshotFixture(t, src)
	data := exportSnapshot(t, src, false)
	lines := snapshotLines(t, data)
	half := resealed(lines[:3]) // the header and two roots
	for _, mode := range []store.ImportMode{store.ImportMerge, store.ImportReplace} {
		t.Run(string(mode), func(t *testing.T) {
			dst := storetest.New(t)
			must[store.ImportReport](t)(importSnapshot(dst, half, store.ImportOptions{Mode: mode}))
			if err := dst.DebugSet(ctx, "meta:import", `{"sha256":"unfinished"}`); err != nil {
				t.Fatal(err)
			}
			mustCheck(t, dst)
			rep := must[store.ImportReport](t)(importSnapshot(dst, data, store.ImportOptions{Mode: mode}))
			if rep.Added != 2 || rep.Unchanged != 2 {
				t.Errorf("the second run %+v, want the 2 missing roots added and 2 unchanged", rep)
			}
			mustCheck(t, dst)
			if got, want := documents(t, dst), documents(t, src); !reflect.DeepEqual(got, want) {
				t.Errorf("after the second run\n%+v\nwant\n%+v", got, want)
			}
			if keys := dumpKeys(t, dst); slices.Contains(keys, "meta:import") {
				t.Errorf("meta:import left after a finished import")
			}
		})
	}
}
