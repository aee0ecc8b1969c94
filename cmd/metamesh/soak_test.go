package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// The soak (make soak; METAMESH_SOAK is how long the library churns):
// three households run as `metamesh run` processes with their managed
// Redis. Every household's library changes a few times a second (files
// added, changed, renamed, moved between folders, deleted, subtitles
// and posters beside them) while each household looks up the others'
// files and searches them at a steady rate. Every two minutes one
// household is killed with SIGKILL and started again; once, a
// household's Redis is killed. At the end: fsck is clean everywhere;
// every file on disk resolves by each of its CIDs locally and from every
// other household; content deleted from a library no longer resolves
// locally there; no node is gone or logged a panic; each node's
// resident memory and goroutines are within 10% of their level a minute
// after its last start. METAMESH_SOAK_FAULTS adds faults: a data
// directory that fills, a library unmounted (soak_faults_test.go).
func TestSoak(t *testing.T) {
	d := os.Getenv("METAMESH_SOAK")
	if d == "" {
		t.Skip("the soak: make soak (METAMESH_SOAK=10m)")
	}
	churnFor, err := time.ParseDuration(d)
	if err != nil {
		t.Fatalf("METAMESH_SOAK=%q: %v", d, err)
	}
	faultNames, err := parseSoakFaults(os.Getenv(soakFaultsEnv))
	if err != nil {
		t.Fatal(err)
	}
	hs := make([]*household, 3)
	for i := range hs {
		h := &household{name: string(rune('A' + i)), data: storetest.Dir(t), api: freeAddr(t),
			p2p: fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)), files: map[string]ingest.FileHashes{}}
		h.lib, _ = filepath.EvalSymlinks(t.TempDir())
		h.log = filepath.Join(t.TempDir(), "node.log")
		hs[i] = h
	}
	// The faults: the data directory of C fills, the library of B goes
	// away, each for a quarter of the churn (soak_faults_test.go).
	var faults []soakFault
	if faultNames["disk"] && mountDataTmpfs(t, hs[2]) {
		faults = append(faults, &diskFault{h: hs[2], fullAfter: churnFor / 4, freeAfter: churnFor / 2})
	}
	if faultNames["library"] {
		if src, ok := mountLibrary(t, hs[1]); ok {
			faults = append(faults, &libraryFault{h: hs[1], src: src, awayAfter: churnFor * 55 / 100, backAfter: churnFor * 80 / 100})
		}
	}
	faultOn := func(h *household) bool {
		return slices.ContainsFunc(faults, func(f soakFault) bool { return f.on(h) })
	}
	for _, h := range hs {
		h.id = nodeID(t, h.data)
	}
	for i, h := range hs {
		if i > 0 {
			h.bootstrap = hs[0].p2p + "/p2p/" + hs[0].id
		}
		h.start(t)
	}
	t.Cleanup(func() {
		for _, h := range hs {
			h.stop()
		}
	})

	start := time.Now()
	for _, f := range faults {
		f.begin(start)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops, lookups, answered, searches atomic.Int64
	var latMu sync.Mutex
	var lat []time.Duration
	for i, h := range hs {
		wg.Add(2)
		go func() { defer wg.Done(); h.churn(t, stop, &ops) }()
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				other := hs[(i+1+rng.IntN(len(hs)-1))%len(hs)]
				if n%4 == 3 {
					if _, ok := get(h.api, "/api/search?federated=1&q="+url.QueryEscape(other.word(rng))); ok {
						searches.Add(1)
					}
					continue
				}
				c := other.someCID(rng)
				if c == "" {
					continue
				}
				t0 := time.Now()
				code, _ := get(h.api, "/api/meta/"+c)
				lookups.Add(1)
				if code == 200 {
					answered.Add(1)
					latMu.Lock()
					lat = append(lat, time.Since(t0))
					latMu.Unlock()
				}
			}
		}()
	}

	// Kills, one household every two minutes; a Redis once, midway. The
	// baseline of a node's memory is taken a minute after its last start,
	// or after the end of its fault (a node whose data directory is full
	// holds less of its library).
	restarts, redisKills := 0, 0
	wasOn := map[*household]bool{}
	for _, h := range hs {
		h.baselineAt = start.Add(time.Minute)
	}
	sampleTick := time.NewTicker(5 * time.Second)
	killEvery := 2 * time.Minute
	nextKill := start.Add(killEvery)
	redisAt := start.Add(churnFor / 2)
	end := start.Add(churnFor)
	for now := time.Now(); now.Before(end); now = <-sampleTick.C {
		for _, h := range hs {
			if h.baseline.rss == 0 && !now.Before(h.baselineAt) && !faultOn(h) {
				h.baseline = h.sample(t)
			}
		}
		for _, f := range faults {
			f.step(t, now)
		}
		for _, h := range hs {
			on := faultOn(h)
			if wasOn[h] && !on {
				h.baseline, h.baselineAt = usage{}, time.Now().Add(time.Minute)
			}
			wasOn[h] = on
		}
		if !now.Before(nextKill) && end.Sub(now) > time.Minute+10*time.Second {
			h := hs[restarts%len(hs)]
			for k := 1; faultOn(h) && k < len(hs); k++ {
				h = hs[(restarts+k)%len(hs)] // not one whose fault is on
			}
			t.Logf("%s: SIGKILL at %s", h.name, now.Sub(start).Round(time.Second))
			h.kill()
			h.start(t)
			h.baseline, h.baselineAt = usage{}, time.Now().Add(time.Minute)
			restarts++
			nextKill = nextKill.Add(killEvery)
		}
		if redisKills == 0 && !now.Before(redisAt) {
			h := hs[1]
			if pid := redisPID(h.data); pid > 0 {
				t.Logf("%s: SIGKILL of its redis-server (pid %d) at %s", h.name, pid, now.Sub(start).Round(time.Second))
				_ = syscall.Kill(pid, syscall.SIGKILL)
				redisKills++
			} else {
				t.Errorf("%s: no redis-server found to kill", h.name)
				redisKills = -1
			}
		}
	}
	sampleTick.Stop()
	// Memory and goroutines are read before the churn stops, as the
	// baseline was, with the library the same size.
	final := make([]usage, len(hs))
	for i, h := range hs {
		final[i] = h.sample(t)
	}
	close(stop)
	wg.Wait()
	t.Logf("churn over after %s: %d library changes, %d lookups (%d answered), %d searches",
		time.Since(start).Round(time.Second), ops.Load(), lookups.Load(), answered.Load(), searches.Load())

	// Everything on disk resolves, by every CID, locally and from every
	// other household; nothing deleted resolves where it was deleted.
	checked := 0
	for _, h := range hs {
		onDisk := h.walk(t)
		shas := map[string]bool{}
		for _, fh := range onDisk {
			shas[fh.SHA256] = true
		}
		for p, fh := range onDisk {
			for _, c := range []string{fh.Midhash, fh.SHA256, fh.IPFS} {
				waiting.For(t, fmt.Sprintf("%s to resolve its %s by %s", h.name, p, c), func() bool {
					code, _ := get(h.api, "/api/meta/"+c+"?local=1")
					return code == 200
				}, spread...)
				for _, o := range hs {
					if o != h {
						waiting.For(t, fmt.Sprintf("%s to resolve %s's %s by %s", o.name, h.name, p, c), func() bool {
							code, _ := get(o.api, "/api/meta/"+c)
							return code == 200
						}, spread...)
					}
				}
				checked++
			}
		}
		for _, sha := range h.deletedContent() {
			if shas[sha] {
				continue // the same bytes are still there under another name
			}
			if code, _ := get(h.api, "/api/meta/"+sha+"?local=1"); code != 404 {
				t.Errorf("%s: deleted content %s answers %d locally, want 404", h.name, sha, code)
			}
		}
		if out, errOut, code := metamesh(t, nil, "fsck", "--data", h.data); code != 0 {
			t.Errorf("%s: fsck: %d\n%s%s", h.name, code, out, errOut)
		}
		if err := h.alive(); err != nil {
			t.Errorf("%s: %v", h.name, err)
		}
		if ps := panics(h.log); len(ps) > 0 {
			t.Errorf("%s: its log (%s) says:\n%s", h.name, h.log, strings.Join(ps, "\n"))
		}
	}
	for _, f := range faults {
		t.Logf("fault %s", f.report())
	}

	// Memory and goroutines back to their level a minute after the start.
	for i, h := range hs {
		now := final[i]
		if h.baseline.rss == 0 {
			t.Logf("%s: resident %.1f MiB, goroutines %d (not compared: its fault ended less than a minute before the end)",
				h.name, float64(now.rss)/(1<<20), now.goroutines)
			continue
		}
		t.Logf("%s: resident %.1f MiB (%.1f a minute after its start or fault), goroutines %d (%d)",
			h.name, float64(now.rss)/(1<<20), float64(h.baseline.rss)/(1<<20), now.goroutines, h.baseline.goroutines)
		if h.baseline.rss > 0 && float64(now.rss) > 1.10*float64(h.baseline.rss) {
			t.Errorf("%s: resident memory %d, more than 10%% above %d", h.name, now.rss, h.baseline.rss)
		}
		if h.baseline.goroutines > 0 && float64(now.goroutines) > 1.10*float64(h.baseline.goroutines) {
			t.Errorf("%s: %d goroutines, more than 10%% above %d", h.name, now.goroutines, h.baseline.goroutines)
		}
	}
	slices.Sort(lat)
	p99 := time.Duration(0)
	if len(lat) > 0 {
		p99 = lat[len(lat)*99/100]
	}
	t.Logf("soak: %s of churn; %d library changes; %d restarts (SIGKILL), %d Redis kill; %d lookups, %d answered, p99 %s; %d searches; %d CIDs checked at the end",
		churnFor, ops.Load(), restarts, max(redisKills, 0), lookups.Load(), answered.Load(), p99.Round(time.Millisecond), searches.Load(), checked)
}

// household is one `metamesh run` process and the library it churns.
type household struct {
	name, lib, data, api, p2p, id, bootstrap, log string
	cmd                                           *exec.Cmd

	// churnMu is held by each change of the churn, and by a fault that
	// wants the library to stay as it is.
	churnMu sync.Mutex

	mu      sync.Mutex
	files   map[string]ingest.FileHashes // the churn's videos and sidecars as written
	deleted []string                     // sha2-256 CIDs of content removed
	// recording: the paths written are kept in written (a fault's).
	recording bool
	written   []string

	baselineAt time.Time
	baseline   usage
}

type usage struct {
	rss, goroutines int64
}

func (h *household) start(t *testing.T) {
	t.Helper()
	args := []string{"run", "--library", h.lib, "--data", h.data, "--api", h.api, "--listen", h.p2p,
		"--settle", "200ms", "--log-level", "warn"}
	if h.bootstrap != "" {
		args = append(args, "--bootstrap", h.bootstrap)
	}
	logf, err := os.OpenFile(h.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	h.cmd = exec.Command(binary, args...)
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h.cmd, h.api)
}

func (h *household) kill() {
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
}

func (h *household) stop() {
	if h.cmd != nil && h.cmd.ProcessState == nil {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		_ = h.cmd.Wait()
	}
}

// churn changes the library a few times a second until stop.
func (h *household) churn(t *testing.T, stop <-chan struct{}, ops *atomic.Int64) {
	rng := rand.New(rand.NewPCG(uint64(h.name[0]), 11))
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	folders := []string{"Movies/Drama", "Movies/Comedy", "Shows/Harbor/Season 1"}
	n := 0
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if err := h.change(rng, folders, &n); err != nil {
			t.Errorf("%s: churn: %v", h.name, err)
			return
		}
		ops.Add(1)
	}
}

// change makes one change to the library.
func (h *household) change(rng *rand.Rand, folders []string, n *int) error {
	h.churnMu.Lock()
	defer h.churnMu.Unlock()
	// The library grows to soakVideos within the first minute and
	// stays about that size: adds and deletes balance.
	videos := h.videos()
	op := rng.IntN(10)
	switch {
	case len(videos) == 0:
		op = 0
	case len(videos) < soakVideos:
		op = min(op, 3+rng.IntN(2)) // mostly adds
	case op <= 3 && rng.IntN(2) == 0:
		op = 7 // as many deletes as adds
	}
	var err error
	switch {
	case op <= 3: // a new video, often with a subtitle and a poster
		*n++
		dir := filepath.Join(h.lib, folders[rng.IntN(len(folders))])
		p := filepath.Join(dir, fmt.Sprintf("%s Lantern %s %d (%d).mkv", h.name, words[rng.IntN(len(words))], *n, 1990+rng.IntN(30)))
		err = h.write(p, 20<<10+rng.IntN(180<<10), rng)
		if err == nil && rng.IntN(2) == 0 {
			err = h.write(strings.TrimSuffix(p, ".mkv")+".en.srt", 200+rng.IntN(2000), rng)
		}
		if err == nil && rng.IntN(4) == 0 {
			err = h.write(filepath.Join(dir, "poster.jpg"), 5<<10+rng.IntN(20<<10), rng)
		}
	case op == 4: // new bytes
		err = h.write(videos[rng.IntN(len(videos))], 20<<10+rng.IntN(180<<10), rng)
	case op == 5: // renamed in place, with its subtitle
		p := videos[rng.IntN(len(videos))]
		err = h.move(p, filepath.Join(filepath.Dir(p), "Renamed "+filepath.Base(p)))
	case op == 6: // moved to another folder
		p := videos[rng.IntN(len(videos))]
		err = h.move(p, filepath.Join(h.lib, folders[rng.IntN(len(folders))], filepath.Base(p)))
	case op <= 8: // deleted, with its sidecars
		p := videos[rng.IntN(len(videos))]
		err = h.remove(p)
		if err == nil {
			err = h.remove(strings.TrimSuffix(p, ".mkv") + ".en.srt")
		}
	default: // a subtitle added or replaced
		p := videos[rng.IntN(len(videos))]
		err = h.write(strings.TrimSuffix(p, ".mkv")+".en.srt", 200+rng.IntN(2000), rng)
	}
	return err
}

// soakVideos is the size the soak's libraries keep, in videos.
const soakVideos = 40

var words = []string{"Harbor", "Meridian", "Quartz", "Willow", "Ember", "Nimbus", "Falcon", "Orchard"}

// write puts size random bytes at p (through a temporary name, as a
// download finishes) and records its CIDs.
func (h *household) write(p string, size int, rng *rand.Rand) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if old, ok := h.file(p); ok {
		h.forget(p, old)
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	tmp := filepath.Join(filepath.Dir(p), ".incoming-"+filepath.Base(p))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	fh, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.files[p] = fh
	if h.recording {
		h.written = append(h.written, p)
	}
	h.mu.Unlock()
	return nil
}

// move renames a video and its subtitle.
func (h *household) move(from, to string) error {
	if _, err := os.Stat(to); err == nil {
		return nil // taken: leave it
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	pairs := [][2]string{{from, to}, {strings.TrimSuffix(from, ".mkv") + ".en.srt", strings.TrimSuffix(to, ".mkv") + ".en.srt"}}
	for _, pr := range pairs {
		fh, ok := h.file(pr[0])
		if !ok {
			continue
		}
		if _, err := os.Stat(pr[1]); err == nil {
			continue
		}
		if err := os.Rename(pr[0], pr[1]); err != nil {
			return err
		}
		h.mu.Lock()
		delete(h.files, pr[0])
		h.files[pr[1]] = fh
		h.mu.Unlock()
	}
	return nil
}

func (h *household) remove(p string) error {
	fh, ok := h.file(p)
	if !ok {
		return nil
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	h.forget(p, fh)
	return nil
}

// forget drops p from the churn's files; its content counts as deleted.
func (h *household) forget(p string, fh ingest.FileHashes) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.files, p)
	h.deleted = append(h.deleted, fh.SHA256)
}

func (h *household) file(p string) (ingest.FileHashes, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fh, ok := h.files[p]
	return fh, ok
}

func (h *household) videos() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for p := range h.files {
		if strings.HasSuffix(p, ".mkv") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// someCID is the canonical CID of one of the household's videos.
func (h *household) someCID(rng *rand.Rand) string {
	vs := h.videos()
	if len(vs) == 0 {
		return ""
	}
	fh, _ := h.file(vs[rng.IntN(len(vs))])
	return fh.Canonical
}

// word is a word of one of the household's titles.
func (h *household) word(rng *rand.Rand) string {
	return words[rng.IntN(len(words))]
}

func (h *household) deletedContent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.deleted)
}

// walk hashes every file of the library as it is on disk now.
func (h *household) walk(t *testing.T) map[string]ingest.FileHashes {
	t.Helper()
	out := map[string]ingest.FileHashes{}
	err := filepath.WalkDir(h.lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		fh, err := ingest.HashFile(context.Background(), p)
		if err != nil {
			return err
		}
		out[p] = fh
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sample reads the node's resident memory and goroutines from /metrics.
func (h *household) sample(t *testing.T) usage {
	t.Helper()
	resp, err := http.Get("http://" + h.api + "/metrics")
	if err != nil {
		t.Errorf("%s: /metrics: %v", h.name, err)
		return usage{}
	}
	defer resp.Body.Close()
	var u usage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		f, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "process_resident_memory_bytes":
			u.rss = int64(f)
		case "go_goroutines":
			u.goroutines = int64(f)
		}
	}
	return u
}

// redisPID finds the managed redis-server of the data directory data.
func redisPID(data string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte("redis-server")) && bytes.Contains(cmdline, []byte(data)) {
			return pid
		}
	}
	return 0
}

// get asks api for path and reports the status and whether it was 200.
func get(api, path string) (int, bool) {
	resp, err := http.Get("http://" + api + path)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var v json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, resp.StatusCode == 200
}

// spread is how the soak waits for a household to resolve a file: up to
// five minutes, for what the DHT takes to spread after the churn, and
// five looks a second, each a lookup that may walk the DHT.
var spread = []waiting.Option{waiting.Limit(5 * time.Minute), waiting.Every(200 * time.Millisecond)}
