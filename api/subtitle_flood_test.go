package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/peakmem"
	"github.com/metamesh/node/internal/waiting"
)

// srtFile writes an SRT of about size bytes to a file of tb's and returns
// its path.
func srtFile(tb testing.TB, size int) string {
	tb.Helper()
	var b bytes.Buffer
	for i := 1; b.Len() < size; i++ {
		s := i % 3600
		fmt.Fprintf(&b, "%d\n%02d:%02d:%02d,000 --> %02d:%02d:%02d,500\n<font color=\"#ffffff\">Line %d of the film</font>\n\n", i, s/3600, s/60%60, s%60, s/3600, s/60%60, s%60, i)
	}
	p := filepath.Join(tb.TempDir(), "film.srt")
	if err := os.WriteFile(p, b.Bytes()[:min(b.Len(), api.MaxSubtitle)], 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// subtitleBackend serves one file on disk under every CID, and counts
// the files open at once and the conversions the server's gauge shows
// while each is opened.
type subtitleBackend struct {
	*fakeBackend
	path  string
	reg   *prometheus.Registry
	opens atomic.Int32
	open  atomic.Int32
	peak  atomic.Int32
	gauge atomic.Int32 // the most metamesh_api_subtitle_conversions seen
}

func (b *subtitleBackend) File(_ context.Context, c string) (*api.File, error) {
	b.opens.Add(1)
	n := b.open.Add(1)
	for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
	}
	if b.reg != nil {
		g := int32(gaugeValue(b.reg, "metamesh_api_subtitle_conversions"))
		for p := b.gauge.Load(); g > p && !b.gauge.CompareAndSwap(p, g); p = b.gauge.Load() {
		}
	}
	f, err := os.Open(b.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &api.File{Content: &countedFile{File: f, open: &b.open}, Name: "film.srt", Size: fi.Size(), CID: c}, nil
}

// countedFile is a file that counts itself closed.
type countedFile struct {
	*os.File
	open *atomic.Int32
	once sync.Once
}

func (f *countedFile) Close() error {
	f.once.Do(func() { f.open.Add(-1) })
	return f.File.Close()
}

// gaugeValue is the value of the gauge name in reg, 0 when it has none.
func gaugeValue(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}

// getSubtitles asks srv for the subtitles of n CIDs at once
// (cid(i)), and returns the status codes seen, with how many of each.
func getSubtitles(t testing.TB, srv http.Handler, n int, cid func(int) string) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := serveQuiet(srv, "/api/subtitle/"+cid(i))
			if rec.code == http.StatusOK && !strings.HasPrefix(rec.body, "WEBVTT\n") {
				t.Errorf("%s: 200 with %.40q", cid(i), rec.body)
			}
			mu.Lock()
			codes[rec.code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return codes
}

// answer is what serveQuiet got.
type answer struct {
	code int
	body string
}

// serveQuiet is serve for goroutines other than the test's.
func serveQuiet(srv http.Handler, target string) answer {
	w := &recorder{h: http.Header{}}
	r, _ := http.NewRequest("GET", "http://localhost:4680"+target, nil)
	r.RemoteAddr = "127.0.0.1:5555"
	srv.ServeHTTP(w, r)
	return answer{w.code, w.b.String()}
}

type recorder struct {
	h    http.Header
	code int
	b    bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.h }
func (w *recorder) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}
func (w *recorder) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.b.Write(p)
}

// cidOf is the i-th of a set of canonical CIDs (raw, sha2-256).
func cidOf(i int) string {
	h, err := multihash.Sum([]byte(strconv.Itoa(i)), multihash.SHA2_256, -1)
	if err != nil {
		panic(err)
	}
	return cid.NewCidV1(cid.Raw, h).String()
}

// TestSubtitle_BoundedWork: many requests at once for subtitles of their
// own CIDs are all answered, never more than MaxSubtitleConversions
// converting at once (files open, and the conversions gauge); a CID
// converted once is served again without opening its file.
func TestSubtitle_BoundedWork(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b := &subtitleBackend{fakeBackend: &fakeBackend{}, path: srtFile(t, 200<<10), reg: reg}
	// Every request waits its turn, however loaded the machine: the 503
	// after the wait is not what this test looks at.
	srv := newServer(b, api.Options{Registerer: reg, SubtitleWait: waiting.Guard})
	const n = 40
	codes := getSubtitles(t, srv, n, cidOf)
	if codes[http.StatusOK] != n {
		t.Errorf("answers %v, want %d × 200", codes, n)
	}
	if p := b.peak.Load(); p < 1 || p > api.MaxSubtitleConversions {
		t.Errorf("%d subtitle files open at once, want 1 to %d", p, api.MaxSubtitleConversions)
	}
	if g := b.gauge.Load(); g < 1 || g > api.MaxSubtitleConversions {
		t.Errorf("metamesh_api_subtitle_conversions reached %d, want 1 to %d", g, api.MaxSubtitleConversions)
	}
	if got := b.opens.Load(); got != n {
		t.Errorf("%d files opened for %d CIDs", got, n)
	}
	if g := gaugeValue(reg, "metamesh_api_subtitle_conversions"); g != 0 {
		t.Errorf("%v conversions running after all were answered", g)
	}
	// Asked again, all at once: served from what was kept.
	codes = getSubtitles(t, srv, n, func(i int) string { return cidOf(i % 3) })
	if codes[http.StatusOK] != n || b.opens.Load() != n {
		t.Errorf("again: answers %v and %d files opened, want %d × 200 and none opened", codes, b.opens.Load()-n, n)
	}
}

// BenchmarkSubtitle_Flood: 80 requests at once for 4 MiB SRTs of their
// own CIDs against one alone, in peak heap and RSS.
func BenchmarkSubtitle_Flood(b *testing.B) {
	path := srtFile(b, api.MaxSubtitle)
	const n = 80
	for round := 0; b.Loop(); round++ {
		var one, many [2]uint64
		var codes map[int]int
		cids := func(base int) func(int) string { return func(i int) string { return cidOf(round*1000 + base + i) } }
		one[0], one[1] = peakmem.Measure(func() {
			codes = getSubtitles(b, newServer(&subtitleBackend{fakeBackend: &fakeBackend{}, path: path}, api.Options{}), 1, cids(0))
		})
		if codes[http.StatusOK] != 1 {
			b.Fatalf("one alone: %v", codes)
		}
		many[0], many[1] = peakmem.Measure(func() {
			codes = getSubtitles(b, newServer(&subtitleBackend{fakeBackend: &fakeBackend{}, path: path}, api.Options{}), n, cids(100))
		})
		if codes[http.StatusOK] != n {
			b.Fatalf("%d at once: %v", n, codes)
		}
		b.ReportMetric(float64(one[0])/(1<<20), "heap-MiB-1")
		b.ReportMetric(float64(many[0])/(1<<20), "heap-MiB-80")
		b.ReportMetric(float64(many[0])/float64(one[0]), "heap-80/1")
		b.ReportMetric(float64(one[1])/(1<<20), "rss-MiB-1")
		b.ReportMetric(float64(many[1])/(1<<20), "rss-MiB-80")
		b.ReportMetric(float64(many[1])/float64(max(one[1], 1)), "rss-80/1")
	}
}
