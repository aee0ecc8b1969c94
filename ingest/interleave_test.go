package ingest_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// gateStore is the real store with gates on the metadata writes of
// chosen paths: the next such write waits, once it has read whatever it
// writes, until the test lets it go. It also records any two writes of
// one path's metadata in progress at once, the interleaving in which an
// older reading of a video's links is written over a newer one.
type gateStore struct {
	ingest.Store
	tb       testing.TB
	mu       sync.Mutex
	gates    []*gate
	busy     map[string]int
	writes   map[string]int // metadata writes by path
	overlaps []string
	// looked is told each path the store is asked about (Path).
	looked chan string
}

func (g *gateStore) Path(ctx context.Context, path string) (store.PathState, error) {
	select {
	case g.looked <- path:
	default:
	}
	return g.Store.Path(ctx, path)
}

type gate struct {
	method, path string
	held         chan struct{} // closed once the write waits
	release      chan struct{}
	once         sync.Once
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func newGateStore(tb testing.TB, s *store.Store) *gateStore {
	return &gateStore{Store: s, tb: tb, busy: map[string]int{}, writes: map[string]int{}, looked: make(chan string, 1024)}
}

// hold arms a gate on the next write of path by method (SetExtracted,
// Ingest); it is opened at the latest when the test ends.
func (g *gateStore) hold(method, path string) *gate {
	gt := &gate{method: method, path: path, held: make(chan struct{}), release: make(chan struct{})}
	g.mu.Lock()
	g.gates = append(g.gates, gt)
	g.mu.Unlock()
	g.tb.Cleanup(gt.open)
	return gt
}

// pass runs one write of path's metadata through its gate.
func (g *gateStore) pass(method, path string) (done func()) {
	g.mu.Lock()
	g.busy[path]++
	g.writes[path]++
	if g.busy[path] > 1 {
		g.overlaps = append(g.overlaps, method+" "+path)
	}
	var gt *gate
	if i := slices.IndexFunc(g.gates, func(x *gate) bool { return x.method == method && x.path == path }); i >= 0 {
		gt = g.gates[i]
		g.gates = slices.Delete(g.gates, i, i+1)
	}
	g.mu.Unlock()
	if gt != nil {
		close(gt.held)
		<-gt.release
	}
	return func() {
		g.mu.Lock()
		g.busy[path]--
		g.mu.Unlock()
	}
}

func (g *gateStore) SetExtracted(ctx context.Context, path string, m store.Meta) (store.Outcome, int, error) {
	defer g.pass("SetExtracted", path)()
	return g.Store.SetExtracted(ctx, path, m)
}

func (g *gateStore) Ingest(ctx context.Context, f store.FileStat, h store.Hashes, m store.Meta) (store.Outcome, int, error) {
	defer g.pass("Ingest", f.Path)()
	return g.Store.Ingest(ctx, f, h, m)
}

// checkOverlaps fails the test when two writes of one path overlapped.
func (g *gateStore) checkOverlaps() {
	g.tb.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.overlaps) > 0 {
		g.tb.Errorf("writes of one path's metadata overlapped: %v", g.overlaps)
	}
}

// waitHeld waits until gt holds its write.
func waitHeld(tb testing.TB, gt *gate) {
	tb.Helper()
	waiting.For(tb, gt.method+" of "+gt.path+" held", func() bool {
		select {
		case <-gt.held:
			return true
		default:
			return false
		}
	})
}

// interleave holds the next write of held's metadata by method, makes
// first happen (which reaches that write), then then, waits until the
// store has the full hashes of every path of stored (relative to l),
// and lets the held write go.
func interleave(t *testing.T, s *store.Store, g *gateStore, l *lib, method, held string, first, then func(), stored ...string) {
	t.Helper()
	gt := g.hold(method, l.path(held))
	first()
	waitHeld(t, gt)
	then()
	waiting.For(t, fmt.Sprint(stored, " stored"), func() bool {
		for _, p := range stored {
			if !hashed(s, l.path(p)) {
				return false
			}
		}
		return true
	})
	gt.open()
}

// hashed reports whether the store has the full hashes of path.
func hashed(s *store.Store, path string) bool {
	st, err := s.Path(bg, path)
	return err == nil && st.Hashed
}

// linksOf are a video's link fields.
func linksOf(tb testing.TB, s *store.Store, video string) map[string]string {
	tb.Helper()
	_, d := docOf(tb, s, video)
	out := map[string]string{}
	for k, v := range d.Fields {
		if strings.HasPrefix(k, "art/") || strings.HasPrefix(k, "subtitles/") {
			out[k] = v
		}
	}
	return out
}

// A video's links follow its sidecars in every order their jobs can
// interleave. Each case holds one write at the point where it has read
// what it writes, lets the other file's work happen in that window, then
// lets the write go: no sleeps, the same interleaving on every run, and
// never two writes of one video's metadata at once.
func TestRelink_Interleavings(t *testing.T) {
	const (
		video  = "Shows/Lost/Season 1/Lost.S01E01.mkv"
		poster = "Shows/Lost/season01-poster.jpg"
		sub    = "Shows/Lost/Season 1/Subs/Lost.S01E01/2_English.srt"
		fanart = "Shows/Lost/fanart.jpg"
		subFr  = "Shows/Lost/Season 1/Lost.S01E01.fr.srt"
		nfo    = "Shows/Lost/Season 1/Lost.S01E01.nfo"
	)
	srt := func(text string) []byte { return []byte("1\n00:00:01,000 --> 00:00:02,000\n" + text + "\n") }
	for _, tt := range []struct {
		name string
		// before are the files of the first scan.
		before []string
		// run makes the change while a write is held; it returns the
		// fields the video has at the end, beside wantLinks.
		run       func(t *testing.T, s *store.Store, g *gateStore, l *lib)
		wantLinks []string // paths linked from the video at the end
		want      map[string]string
	}{{
		// The race a loaded machine lost: a sidecar stored between a
		// relink's reading of the links and its write. The relink it asks
		// for runs after the held one, not beside it.
		name:   "a sidecar lands while its video's relink is held",
		before: []string{video, poster},
		run: func(t *testing.T, s *store.Store, g *gateStore, l *lib) {
			interleave(t, s, g, l, "SetExtracted", video,
				func() { l.write(sub, srt("Hi")) },
				func() { l.write(fanart, randBytes(t, 7<<10)) }, fanart)
		},
		wantLinks: []string{poster, sub, fanart},
	}, {
		name:   "a sidecar lands while its video's own extraction is held",
		before: nil,
		run: func(t *testing.T, s *store.Store, g *gateStore, l *lib) {
			interleave(t, s, g, l, "Ingest", video,
				func() { l.write(video, randBytes(t, 80<<10)) },
				func() { l.write(sub, srt("Hi")); l.write(poster, randBytes(t, 6<<10)) }, sub, poster)
		},
		wantLinks: []string{poster, sub},
	}, {
		name:   "a video's NFO lands while its extraction is held",
		before: nil,
		run: func(t *testing.T, s *store.Store, g *gateStore, l *lib) {
			interleave(t, s, g, l, "Ingest", video,
				func() { l.write(video, randBytes(t, 80<<10)) },
				func() { l.write(nfo, []byte("<episodedetails><title>Pilot</title></episodedetails>")) }, nfo)
		},
		want: map[string]string{"episodeTitle": "Pilot"},
	}, {
		// The video is linked while its sidecar is known by its midhash
		// alone; the sidecar's confirmation relinks it by its final CID.
		name:   "a video is extracted while its sidecar waits for its full hashes",
		before: nil,
		run: func(t *testing.T, s *store.Store, g *gateStore, l *lib) {
			interleave(t, s, g, l, "Ingest", sub,
				func() { l.write(sub, srt("Hi")) },
				func() { l.write(video, randBytes(t, 80<<10)) }, video)
		},
		wantLinks: []string{sub},
	}, {
		// A rename of the video while a relink holds it: the rename waits
		// for it, and the new name's links do not keep the old name's
		// subtitle.
		name:   "the video is renamed while its relink is held",
		before: []string{video, poster},
		run: func(t *testing.T, s *store.Store, g *gateStore, l *lib) {
			gt := g.hold("SetExtracted", l.path(video))
			l.write(subFr, srt("Salut"))
			waitHeld(t, gt)
			renamed := l.path("Shows/Lost/Season 1/Lost.S01E01.Pilot.mkv")
			if err := os.Rename(l.path(video), renamed); err != nil {
				t.Fatal(err)
			}
			gt.open()
			// Idle says nothing before the rename's events reach the
			// ingester: wait for its end.
			waiting.For(t, "the renamed video stored", func() bool { return known(s, renamed) && !known(s, l.path(video)) })
		},
		wantLinks: []string{poster},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.New(t)
			g := newGateStore(t, s)
			l := newLib(t)
			cfg := testConfig(l)
			cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
			for _, p := range tt.before {
				if strings.HasSuffix(p, ".mkv") {
					l.write(p, randBytes(t, 80<<10))
				} else {
					l.write(p, randBytes(t, 6<<10))
				}
			}
			in := watchWith(t, g, cfg)
			tt.run(t, s, g, l)
			idle(t, in)
			v := l.path(video)
			if _, err := os.Stat(v); err != nil {
				v = l.path("Shows/Lost/Season 1/Lost.S01E01.Pilot.mkv")
			}
			want := map[string]string{}
			for _, p := range tt.wantLinks {
				_, d := docOf(t, s, l.path(p))
				want[linkKey(p)] = d.CanonicalCID()
			}
			if got := linksOf(t, s, v); !maps.Equal(got, want) {
				t.Errorf("links:\n got  %v\n want %v", got, want)
			}
			_, d := docOf(t, s, v)
			for k, w := range tt.want {
				if d.Fields[k] != w {
					t.Errorf("%s = %q, want %q", k, d.Fields[k], w)
				}
			}
			g.checkOverlaps()
			mustCheck(t, s)
		})
	}
}

// linkKey is the field a sidecar of the test's episode fills.
func linkKey(p string) string {
	switch {
	case strings.HasSuffix(p, "-poster.jpg"):
		return "art/poster"
	case strings.HasSuffix(p, "fanart.jpg"):
		return "art/fanart"
	case strings.HasSuffix(p, ".fr.srt"):
		return "subtitles/fre/0"
	}
	return "subtitles/eng/0"
}

// A restart that finds a video and its sidecars as they were writes none
// of the video's fields again.
func TestRelink_UnchangedOnRestart(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Extractors = []ingest.Extractor{ingest.FileInfo{}, ingest.Filename{}, ingest.NFOReader{}}
	video := l.write("Movies/Heat (1995)/Heat.1995.mkv", randBytes(t, 70<<10))
	l.write("Movies/Heat (1995)/Heat.1995.en.srt", []byte("1\n00:00:01,000 --> 00:00:02,000\nHello\n"))
	l.write("Movies/Heat (1995)/poster.jpg", randBytes(t, 3<<10))
	l.write("Movies/Heat (1995)/movie.nfo", []byte("<movie><title>Heat</title></movie>"))
	first := watchWith(t, s, cfg)
	if got := linksOf(t, s, video); len(got) != 2 {
		t.Fatalf("links after the first scan: %v", got)
	}
	first.Close()
	g := newGateStore(t, s)
	watchWith(t, g, cfg)
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.writes[video]; n != 0 {
		t.Errorf("the restart wrote the unchanged video's metadata %d times", n)
	}
}

// A file moved while the job storing its arrival still holds it is a
// move, not an add of the new name and a delete of the old: the new name
// waits for the job to let go of the old.
func TestMove_WhileArrivalHeld(t *testing.T) {
	s := storetest.New(t)
	g := newGateStore(t, s)
	l := newLib(t)
	in := watchWith(t, g, testConfig(l))
	from, to := l.path("Films/b.mkv"), l.path("Films/c.mkv")
	gt := g.hold("Ingest", from)
	l.write("Films/b.mkv", randBytes(t, 5000))
	waitHeld(t, gt)
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	// The new name settles within a few Settle periods: it must not be
	// handled while the old is held. (A slow machine can only make this
	// pass where it should fail, never the reverse.)
	settled := time.After(20 * testConfig(l).Settle)
	for looking := true; looking; {
		select {
		case p := <-g.looked:
			if p == to {
				t.Errorf("%s was handled on its own while the job on %s ran", to, from)
			}
		case <-settled:
			looking = false
		}
	}
	gt.open()
	idle(t, in)
	evs, err := s.Events(bg, "0", 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Type == store.EventReset || e.Type == "mint" || e.Type == "confirm" {
			continue // not a path's
		}
		got = append(got, e.Type+" "+strings.TrimPrefix(e.OldPath, l.dir)+" "+strings.TrimPrefix(e.Path, l.dir))
	}
	want := []string{"add  /Films/b.mkv", "rename /Films/b.mkv /Films/c.mkv"}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got  %q\n want %q", got, want)
	}
	if !known(s, to) || known(s, from) {
		t.Errorf("known: %s %v, %s %v", to, known(s, to), from, known(s, from))
	}
	mustCheck(t, s)
}

// Twenty files moved while the jobs storing their arrivals hold them, for
// longer than any wait of the loop's own (35 s), are twenty moves: how
// long an arrival takes (a slow disk, ffprobe on a loaded machine) never
// turns a move into an add and a delete.
func TestMove_WhileArrivalsHeldLong(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	g := newGateStore(t, s)
	l := newLib(t)
	cfg := testConfig(l)
	cfg.Workers = 24 // every arrival held at once
	var logs storetest.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	defer func() {
		if t.Failed() {
			t.Logf("ingest's log:\n%s", logs.String())
		}
	}()
	in := watchWith(t, g, cfg)
	const n = 20
	var gates []*gate
	for i := range n {
		from := l.path(fmt.Sprintf("Films/b%02d.mkv", i))
		gates = append(gates, g.hold("Ingest", from))
		l.write(fmt.Sprintf("Films/b%02d.mkv", i), randBytes(t, 5000+i))
	}
	for _, gt := range gates {
		waitHeld(t, gt)
	}
	for i := range n {
		from, to := l.path(fmt.Sprintf("Films/b%02d.mkv", i)), l.path(fmt.Sprintf("Films/c%02d.mkv", i))
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(35 * time.Second) // the jobs run long: the force of this test, not a timing assertion
	for _, gt := range gates {
		gt.open()
	}
	idle(t, in)
	evs, err := s.Events(bg, "0", 1000)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range evs {
		count[e.Type]++
		if e.Type == "rename" && strings.Replace(e.OldPath, "/b", "/c", 1) != e.Path {
			t.Errorf("rename %s → %s pairs the wrong ends", e.OldPath, e.Path)
		}
	}
	if count["add"] != n || count["rename"] != n || count["delete"] != 0 {
		t.Errorf("events by type %v, want %d add, %d rename, no delete", count, n, n)
	}
	for i := range n {
		if to := l.path(fmt.Sprintf("Films/c%02d.mkv", i)); !known(s, to) {
			t.Errorf("%s is not stored", to)
		}
	}
	mustCheck(t, s)
}
