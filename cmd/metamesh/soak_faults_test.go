package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
)

// The soak's faults (make soak SOAK_FAULTS=disk,library; the environment's
// METAMESH_SOAK_FAULTS): what a household's node meets in a year on a NAS,
// put on one household each while the libraries churn.
//
//   - disk: the household's data directory is a tmpfs the soak mounts.
//     From a quarter to half of the churn it is full (a file written to
//     it until ENOSPC, topped up every few seconds); the node stays up
//     and says so (/ready 503 "data directory full…", /api/status
//     problems and dataDir.full), and once the file is deleted it takes
//     in every file added meanwhile.
//   - library: the household's library is a bind mount of a directory the
//     soak owns. From 55% to 80% of the churn it is unmounted (the
//     household's churn pauses); nothing of it is deleted (no delete
//     event on the change feed), its metadata is still served, and once
//     it is mounted again its files are all still stored and a new file
//     is seen.
const soakFaultsEnv = "METAMESH_SOAK_FAULTS"

// soakFaultNames are the faults METAMESH_SOAK_FAULTS may name.
var soakFaultNames = []string{"disk", "library"}

// parseSoakFaults reads a comma list of fault names; an unknown one is an
// error naming it and the known ones.
func parseSoakFaults(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case slices.Contains(soakFaultNames, f):
			out[f] = true
		default:
			return nil, fmt.Errorf("%s=%q: unknown fault %q (known: %s)", soakFaultsEnv, s, f, strings.Join(soakFaultNames, ", "))
		}
	}
	return out, nil
}

func TestParseSoakFaults(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"disk", []string{"disk"}, ""},
		{"disk,library", []string{"disk", "library"}, ""},
		{" library , disk,", []string{"disk", "library"}, ""},
		{"disk,network", nil, `METAMESH_SOAK_FAULTS="disk,network": unknown fault "network" (known: disk, library)`},
	} {
		got, err := parseSoakFaults(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("parseSoakFaults(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSoakFaults(%q): %v", c.in, err)
			continue
		}
		var names []string
		for n := range got {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, c.want) {
			t.Errorf("parseSoakFaults(%q) = %v, want %v", c.in, names, c.want)
		}
	}
}

// soakFault is one fault put on one household during the churn.
type soakFault interface {
	// step does what is due at now; it is called every few seconds.
	step(t *testing.T, now time.Time)
	// on is true while the fault is on: the household is not killed then.
	on(h *household) bool
	// begin is called as the churn starts.
	begin(start time.Time)
	// report is the fault's figures, once it is over.
	report() string
}

// --- disk ---

// diskFullSize is the tmpfs of the disk fault: room for a household's
// data directory and the 64 MiB the node wants free, and small enough to
// fill at once.
const diskFullSize = 256 << 20

type diskFault struct {
	h                    *household
	fullAfter, freeAfter time.Duration // from the start of the churn
	start                time.Time
	fullAt, freeAt       time.Time
	filler               string
	state                int // 0 before, 1 full, 2 over
	fillerBytes          int64
	topUps               int
	readyChecks          int
	addedWhileFull       int
	reason               string
}

// mountDataTmpfs makes h's data directory a tmpfs of diskFullSize; false
// (with the reason logged) when it cannot mount.
func mountDataTmpfs(t *testing.T, h *household) bool {
	t.Helper()
	if err := syscall.Mount("tmpfs", h.data, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", diskFullSize)); err != nil {
		t.Logf("fault disk skipped: cannot mount a tmpfs for %s's data directory (%v): run as root", h.name, err)
		return false
	}
	t.Cleanup(func() { unmount(t, h.data) })
	return true
}

func (f *diskFault) begin(start time.Time) {
	f.start, f.fullAt, f.freeAt = start, start.Add(f.fullAfter), start.Add(f.freeAfter)
}

func (f *diskFault) on(h *household) bool { return h == f.h && f.state == 1 }

func (f *diskFault) step(t *testing.T, now time.Time) {
	t.Helper()
	h := f.h
	switch {
	case f.state == 0 && !now.Before(f.fullAt):
		f.filler = filepath.Join(h.data, "soak-filler")
		h.recordWrites(true)
		f.top(t)
		f.state = 1
		t.Logf("%s: data directory filled at %s (%d MiB written until ENOSPC)", h.name, now.Sub(f.start).Round(time.Second), f.fillerBytes>>20)
		waiting.For(t, h.name+"'s /ready to say its data directory is full", func() bool {
			return f.saysFull(t) == nil
		})
	case f.state == 1 && now.Before(f.freeAt):
		// Full for a while: kept full, the node up and saying so.
		f.top(t)
		if err := f.saysFull(t); err != nil {
			t.Errorf("%s: while its data directory is full: %v", h.name, err)
		}
		f.readyChecks++
	case f.state == 1:
		if err := os.Remove(f.filler); err != nil {
			t.Fatalf("%s: remove the filler: %v", h.name, err)
		}
		added := h.recordWrites(false)
		t.Logf("%s: data directory freed at %s, %d files written meanwhile", h.name, now.Sub(f.start).Round(time.Second), len(added))
		waiting.For(t, h.name+" to be ready again once its data directory has space", func() bool {
			code, _ := get(h.api, "/ready")
			return code == 200
		})
		// The files added while it was full, as they are now, are stored:
		// the churn waits meanwhile so they stay as they are.
		h.churnMu.Lock()
		for _, p := range added {
			fh, ok := h.file(p)
			if !ok {
				continue // deleted or renamed since: the final check has it
			}
			waiting.For(t, fmt.Sprintf("%s to store %s, added while its data directory was full", h.name, p), func() bool {
				code, _ := get(h.api, "/api/meta/"+fh.SHA256+"?local=1")
				return code == 200
			})
			f.addedWhileFull++
		}
		h.churnMu.Unlock()
		f.state = 2
	}
}

// top writes to the filler until the file system says ENOSPC.
func (f *diskFault) top(t *testing.T) {
	t.Helper()
	fl, err := os.OpenFile(f.filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return
		}
		t.Fatalf("%s: filler: %v", f.h.name, err)
	}
	defer fl.Close()
	for _, chunk := range []int{1 << 20, 4 << 10, 1} {
		for buf := make([]byte, chunk); ; {
			n, err := fl.Write(buf)
			f.fillerBytes += int64(n)
			if err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("%s: filler: %v", f.h.name, err)
				}
				break
			}
		}
	}
	f.topUps++
}

// saysFull is nil when the node is up, /ready answers 503 with a reason
// that starts "data directory full", and /api/status lists that reason
// among its problems with dataDir.full.
func (f *diskFault) saysFull(t *testing.T) error {
	h := f.h
	if err := h.alive(); err != nil {
		return err
	}
	var ready struct {
		Error string `json:"error"`
	}
	code, err := soakJSON(h.api, "/ready", &ready)
	if err != nil {
		return fmt.Errorf("/ready: %v", err)
	}
	if code != 503 || !strings.HasPrefix(ready.Error, "data directory full") {
		return fmt.Errorf("/ready answers %d %q; want 503 \"data directory full…\"", code, ready.Error)
	}
	f.reason = ready.Error
	var st struct {
		DataDir struct {
			Full bool `json:"full"`
		} `json:"dataDir"`
		Problems []string `json:"problems"`
	}
	if code, err := soakJSON(h.api, "/api/status", &st); err != nil || code != 200 {
		return fmt.Errorf("/api/status: %d %v", code, err)
	}
	if !st.DataDir.Full || !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.HasPrefix(p, "data directory full") }) {
		return fmt.Errorf("/api/status: dataDir.full %v, problems %q; want full and \"data directory full…\"", st.DataDir.Full, st.Problems)
	}
	return nil
}

func (f *diskFault) report() string {
	if f.state != 2 {
		return fmt.Sprintf("disk (%s): never freed", f.h.name)
	}
	return fmt.Sprintf("disk (%s): full for %s (%d MiB of filler, topped up %d times, /ready %q at every look), %d files added meanwhile stored once freed",
		f.h.name, f.freeAt.Sub(f.fullAt).Round(time.Second), f.fillerBytes>>20, f.topUps, f.reason, f.addedWhileFull)
}

// --- library ---

type libraryFault struct {
	h                    *household
	src                  string        // the directory bind-mounted on h.lib
	awayAfter, backAfter time.Duration // from the start of the churn
	start                time.Time
	awayAt, backAt       time.Time
	state                int // 0 before, 1 away, 2 over
	away                 map[string]ingest.FileHashes
	feedFrom             string // the change feed's position at the unmount
	metaChecks           int
	events               int
}

// mountLibrary makes h's library a bind mount of a directory the test
// owns; false (with the reason logged) when it cannot mount.
func mountLibrary(t *testing.T, h *household) (string, bool) {
	t.Helper()
	src, _ := filepath.EvalSymlinks(t.TempDir())
	if err := syscall.Mount(src, h.lib, "", syscall.MS_BIND, ""); err != nil {
		t.Logf("fault library skipped: cannot bind-mount %s's library (%v): run as root", h.name, err)
		return "", false
	}
	t.Cleanup(func() { unmount(t, h.lib) })
	return src, true
}

func (f *libraryFault) begin(start time.Time) {
	f.start, f.awayAt, f.backAt = start, start.Add(f.awayAfter), start.Add(f.backAfter)
}

func (f *libraryFault) on(h *household) bool { return h == f.h && f.state == 1 }

func (f *libraryFault) step(t *testing.T, now time.Time) {
	t.Helper()
	h := f.h
	switch {
	case f.state == 0 && !now.Before(f.awayAt):
		h.churnMu.Lock() // the household's churn waits while its library is away
		f.away = h.snapshot()
		// What the library holds is stored before it goes: a file written
		// a moment before is not lost when the node never saw it whole.
		for p, fh := range f.away {
			waiting.For(t, fmt.Sprintf("%s to store %s before its library is unmounted", h.name, p), func() bool {
				code, _ := get(h.api, "/api/meta/"+fh.SHA256+"?local=1")
				return code == 200
			})
		}
		f.feedFrom = feedPosition(t, h.api)
		waiting.For(t, "the unmount of "+h.lib, func() bool {
			err := syscall.Unmount(h.lib, 0)
			if err != nil && !errors.Is(err, syscall.EBUSY) {
				t.Fatalf("%s: unmount %s: %v", h.name, h.lib, err)
			}
			return err == nil
		})
		f.state = 1
		t.Logf("%s: library unmounted at %s (%d files on it)", h.name, now.Sub(f.start).Round(time.Second), len(f.away))
		waiting.For(t, h.name+" to say its library is unavailable", func() bool {
			return f.saysUnavailable() == nil
		})
	case f.state == 1 && now.Before(f.backAt):
		if err := f.whileAway(); err != nil {
			t.Errorf("%s: while its library is unmounted: %v", h.name, err)
		}
	case f.state == 1:
		if err := f.whileAway(); err != nil {
			t.Errorf("%s: while its library is unmounted: %v", h.name, err)
		}
		f.noDeletes(t, "while its library was unmounted")
		if err := syscall.Mount(f.src, h.lib, "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("%s: mount %s again: %v", h.name, h.lib, err)
		}
		t.Logf("%s: library mounted again at %s", h.name, now.Sub(f.start).Round(time.Second))
		waiting.For(t, h.name+" to be ready with its library back", func() bool {
			code, _ := get(h.api, "/ready")
			return code == 200
		})
		// Every file it had is still stored, and a new one is seen.
		for p, fh := range f.away {
			waiting.For(t, fmt.Sprintf("%s to resolve %s after its library came back", h.name, p), func() bool {
				code, _ := get(h.api, "/api/meta/"+fh.SHA256+"?local=1")
				return code == 200
			})
		}
		rng := rand.New(rand.NewPCG(uint64(now.UnixNano()), 5))
		p := filepath.Join(h.lib, "Movies", "Drama", h.name+" Back Again (2001).mkv")
		if err := h.write(p, 64<<10, rng); err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		fh, _ := h.file(p)
		waiting.For(t, h.name+" to see "+p+", added once its library came back", func() bool {
			code, _ := get(h.api, "/api/meta/"+fh.SHA256+"?local=1")
			return code == 200
		})
		f.noDeletes(t, "since its library was unmounted")
		h.churnMu.Unlock()
		f.state = 2
	}
}

// whileAway: the node is up, the files of the library are still known,
// and it says the library is unavailable.
func (f *libraryFault) whileAway() error {
	h := f.h
	if err := h.alive(); err != nil {
		return err
	}
	for p, fh := range f.away {
		if code, _ := get(h.api, "/api/meta/"+fh.SHA256+"?local=1"); code != 200 {
			return fmt.Errorf("%s (%s) answers %d locally; want 200, its metadata kept", p, fh.SHA256, code)
		}
		f.metaChecks++
	}
	return f.saysUnavailable()
}

// saysUnavailable is nil when /api/status names the library unavailable
// among its problems and a file's bytes answer 503 "library unavailable".
func (f *libraryFault) saysUnavailable() error {
	h := f.h
	var st struct {
		Problems []string `json:"problems"`
	}
	if code, err := soakJSON(h.api, "/api/status", &st); err != nil || code != 200 {
		return fmt.Errorf("/api/status: %d %v", code, err)
	}
	if !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.Contains(p, "library unavailable") }) {
		return fmt.Errorf("/api/status problems %q; want \"library unavailable…\"", st.Problems)
	}
	for _, fh := range f.away {
		var e struct {
			Error string `json:"error"`
		}
		code, err := soakJSON(h.api, "/api/file/"+fh.SHA256, &e)
		if err != nil || code != 503 || !strings.Contains(e.Error, "library unavailable") {
			return fmt.Errorf("/api/file/%s: %d %q %v; want 503 \"library unavailable…\"", fh.SHA256, code, e.Error, err)
		}
		break
	}
	return nil
}

// noDeletes fails the test for every delete (or move away) on the change
// feed, since the unmount, of a file the library held then.
func (f *libraryFault) noDeletes(t *testing.T, when string) {
	t.Helper()
	evs := feedSince(t, f.h.api, f.feedFrom)
	f.events = len(evs)
	for _, e := range evs {
		if _, ok := f.away[e.Path]; ok && e.Type == "delete" {
			t.Errorf("%s: a delete event %s %s; want none for a file of the library %s", f.h.name, e.ID, e.Path, when)
		}
		if _, ok := f.away[e.OldPath]; ok && e.Type == "rename" {
			t.Errorf("%s: a rename event %s %s → %s; want none %s", f.h.name, e.ID, e.OldPath, e.Path, when)
		}
	}
}

func (f *libraryFault) report() string {
	if f.state != 2 {
		return fmt.Sprintf("library (%s): never mounted again", f.h.name)
	}
	return fmt.Sprintf("library (%s): unmounted for %s with %d files, their metadata answered %d times meanwhile, no delete among %d feed events, all stored once it was back, a new file seen",
		f.h.name, f.backAt.Sub(f.awayAt).Round(time.Second), len(f.away), f.metaChecks, f.events)
}

// --- helpers ---

// unmount undoes a mount of the test's, lazily when it is still busy.
func unmount(t *testing.T, dir string) {
	if err := syscall.Unmount(dir, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	}
}

// alive is nil when the household's process runs (not exited, not a
// zombie) and answers /health.
func (h *household) alive() error {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", h.cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("the node's process is gone: %v", err)
	}
	if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
		return errors.New("the node's process has exited")
	}
	if code, _ := get(h.api, "/health"); code != 200 {
		return fmt.Errorf("/health answers %d", code)
	}
	return nil
}

// recordWrites starts (on) or ends recording the paths the churn writes;
// ending returns them.
func (h *household) recordWrites(on bool) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.written
	h.recording, h.written = on, nil
	return out
}

// snapshot is the churn's files as they are now.
func (h *household) snapshot() map[string]ingest.FileHashes {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]ingest.FileHashes, len(h.files))
	for p, fh := range h.files {
		out[p] = fh
	}
	return out
}

// soakJSON decodes api's answer to path into v.
func soakJSON(api, path string, v any) (int, error) {
	resp, err := http.Get("http://" + api + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}

// feedEvent is what the soak reads of a change feed event.
type feedEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Path    string `json:"path"`
	OldPath string `json:"oldPath"`
}

// feedPosition is the change feed's newest event ID (the stream says it
// first: `: events after "<id>"`).
func feedPosition(t *testing.T, api string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waiting.Guard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+api+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/api/events: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), ": events after "); ok {
			if pos, err := strconv.Unquote(rest); err == nil {
				return pos
			}
		}
	}
	t.Fatalf("/api/events (%d) never said its position: %v", resp.StatusCode, sc.Err())
	return ""
}

// feedSince reads the change feed from after the event from up to its
// newest event now.
func feedSince(t *testing.T, api, from string) []feedEvent {
	t.Helper()
	until := feedPosition(t, api)
	if until == from {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), waiting.Guard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+api+"/api/events", nil)
	req.Header.Set("Last-Event-ID", from)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("/api/events: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/api/events after %s: %d", from, resp.StatusCode)
	}
	var out []feedEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if event == "reset" {
				t.Errorf("the change feed was trimmed past %s: the events since cannot be read", from)
				return out
			}
			var e feedEvent
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatalf("/api/events: %v", err)
			}
			out = append(out, e)
			if e.ID == until {
				return out
			}
		case line == "":
			event = ""
		}
	}
	t.Fatalf("/api/events after %s ended before %s: %v", from, until, sc.Err())
	return out
}

// panics are the lines of a node's log that say it panicked or the Go
// runtime ended it.
func panics(log string) []string {
	b, _ := os.ReadFile(log)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			out = append(out, l)
		}
	}
	return out
}
