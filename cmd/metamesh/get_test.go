package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store/storetest"
)

// getNode is a running node whose library holds one file of several
// IPFS chunks, with a name that is not ASCII (Content-Disposition's
// filename*).
type getNode struct {
	api   string // host:port
	name  string
	bytes []byte
	h     ingest.FileHashes
}

func startGetNode(t *testing.T) *getNode {
	t.Helper()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	n := &getNode{name: "Amélie (2001).mkv", bytes: make([]byte, 1<<20+12345), api: freeAddr(t)}
	rand.Read(n.bytes)
	p := filepath.Join(lib, n.name)
	if err := os.WriteFile(p, n.bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.h, err = ingest.HashFile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	startRun(t, storetest.Dir(t), n.api, "--library", lib, "--listen", "/ip4/127.0.0.1/tcp/0")
	waiting.Until(t, "the node to serve the file", func() string {
		resp, err := http.Get("http://" + n.api + "/api/file/" + n.h.IPFS)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return ""
	})
	return n
}

// getIn runs metamesh in dir, as a user in that directory would.
func getIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runIn(t, dir, nil, args...)
}

// sameFile fails the test unless the file at p holds want.
func sameFile(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, not the node's file's %d", p, len(got), len(want))
	}
}

// only fails the test unless dir holds exactly the names given.
func only(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, "|") != strings.Join(names, "|") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// relay stands between metamesh get and the node, passing what the node
// sends and noting, for each request, its Range and how many bytes of
// the answer's body went through: what proves a resume asked only for
// the rest. cut > 0 sends only that many bytes of a body, then nothing
// until the client leaves (a stalled download); flip >= 0 turns the
// body's byte at that offset of the file (bytes damaged on the way).
type relay struct {
	node string
	cut  int64
	flip int64

	wg   sync.WaitGroup // the requests being answered
	mu   sync.Mutex
	seen []relayed
}

// relayed is one request: its Range, the node's status and how many of
// the file's bytes went through (none of an error's JSON).
type relayed struct {
	rng    string
	status int
	sent   int64
}

func newRelay(t *testing.T, node string, cut, flip int64) (*relay, string) {
	r := &relay{node: node, cut: cut, flip: flip}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.wg.Add(1)
	defer r.wg.Done()
	up, _ := http.NewRequestWithContext(req.Context(), req.Method, "http://"+r.node+req.URL.RequestURI(), nil)
	up.Header = req.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(up)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	start := int64(0)
	if resp.StatusCode == http.StatusPartialContent {
		fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-", &start)
	}
	var body io.Reader = resp.Body
	if r.cut > 0 {
		body = io.LimitReader(body, r.cut)
	}
	sent, _ := io.Copy(w, &flipper{r: body, at: r.flip - start})
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		sent = 0
	}
	r.mu.Lock()
	r.seen = append(r.seen, relayed{rng: req.Header.Get("Range"), status: resp.StatusCode, sent: sent})
	r.mu.Unlock()
	if r.cut > 0 {
		w.(http.Flusher).Flush()
		<-req.Context().Done()
	}
}

// requests is every request relayed, once all are answered (a client
// may have read all it wanted before the relay was done with it).
func (r *relay) requests() []relayed {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// flipper is r with the byte at offset at turned (none when at < 0).
type flipper struct {
	r  io.Reader
	at int64
}

func (f *flipper) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if f.at >= 0 && f.at < int64(n) {
		b[f.at] ^= 0xFF
	}
	f.at -= int64(n)
	return n, err
}

// TestGet: metamesh get against a running node, by every CID of its
// file and in every way to save it; resumes; refusals, with their exit
// statuses.
func TestGet(t *testing.T) {
	t.Parallel()
	n := startGetNode(t)
	size := int64(len(n.bytes))
	v0 := func() string {
		info, err := protocol.Inspect(n.h.IPFS)
		if err != nil || info.V0 == "" {
			t.Fatalf("no CIDv0 of %s: %v", n.h.IPFS, err)
		}
		return info.V0
	}()
	saved := "saved %s (1060921 bytes, CID verified)\n"

	t.Run("by each CID", func(t *testing.T) {
		for _, tt := range []struct{ name, cid string }{
			{"canonical", n.h.Canonical},
			{"IPFS", n.h.IPFS},
			{"IPFS as CIDv0", v0},
			{"sha2-256", n.h.SHA256},
			{"midhash", n.h.Midhash},
		} {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				out, errOut, code := getIn(t, dir, "get", "--api", n.api, tt.cid)
				want := strings.Replace(saved, "%s", n.name, 1)
				if tt.cid == n.h.Midhash {
					want = strings.Replace(want, "verified)", "verified; a midhash checks the size and 1 MiB of the middle: the IPFS or sha2-256 CID checks every byte)", 1)
				}
				if code != 0 || out != want || errOut != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
				}
				sameFile(t, filepath.Join(dir, n.name), n.bytes)
				only(t, dir, n.name)
			})
		}
	})

	t.Run("where to save", func(t *testing.T) {
		for _, tt := range []struct {
			name  string
			args  func(dir string) []string
			saved string // the path, relative to the test's directory
		}{
			{"-o a file", func(string) []string { return []string{"-o", "film.mkv"} }, "film.mkv"},
			{"-o a directory", func(dir string) []string {
				os.Mkdir(filepath.Join(dir, "films"), 0o755)
				return []string{"-o", "films"}
			}, filepath.Join("films", n.name)},
			{"--force over a file", func(dir string) []string {
				os.WriteFile(filepath.Join(dir, n.name), []byte("old"), 0o644)
				return []string{"--force"}
			}, n.name},
		} {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				out, errOut, code := getIn(t, dir, append([]string{"get", "--api", n.api, n.h.IPFS}, tt.args(dir)...)...)
				if code != 0 || out != strings.Replace(saved, "%s", tt.saved, 1) {
					t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
				}
				sameFile(t, filepath.Join(dir, tt.saved), n.bytes)
			})
		}
	})

	t.Run("stdout", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			quiet   bool
			wantErr string
		}{
			{"says it on stderr", false, "wrote 1060921 bytes to stdout (CID verified)\n"},
			{"--quiet", true, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				args := []string{"get", "--api", n.api, n.h.IPFS, "-o", "-"}
				if tt.quiet {
					args = append(args, "--quiet")
				}
				out, errOut, code := getIn(t, dir, args...)
				if code != 0 || out != string(n.bytes) || errOut != tt.wantErr {
					t.Fatalf("exit %d, %d bytes on stdout, stderr %q; want 0, the file's %d bytes, %q", code, len(out), errOut, size, tt.wantErr)
				}
				only(t, dir)
			})
		}
	})

	// A resume asks only for the bytes after those FILE.part holds, and
	// only while the node's ETag is the one saved beside them; the
	// relay's count of what went through proves which bytes came.
	t.Run("resume", func(t *testing.T) {
		const have = 300_000
		etag := `"` + n.h.Canonical + `"`
		zeros := make([]byte, have)
		for _, tt := range []struct {
			name    string
			part    []byte
			etag    string  // "" for no ETag file
			o       bool    // with -o; else the name is the node's, learned from a first answer
			want    relayed // the request that brought the bytes
			wantSay string
		}{
			{"the rest, -o", n.bytes[:have], etag, true, relayed{"bytes=300000-", 206, size - have}, "resuming " + n.name + " after 293.0 KiB"},
			{"the rest, the node's name", n.bytes[:have], etag, false, relayed{"bytes=300000-", 206, size - have}, "resuming " + n.name + " after 293.0 KiB"},
			{"all there already", n.bytes, etag, true, relayed{"bytes=1060921-", 416, 0}, n.name + ".part already holds all 1060921 bytes"},
			{"another ETag", zeros, `"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"`, true, relayed{"bytes=300000-", 200, size}, "its ETag is no longer"},
			{"no ETag", zeros, "", true, relayed{"", 200, size}, "no ETag saved with " + n.name + ".part"},
			{"more than the file", append(bytes.Clone(n.bytes), 1), etag, true, relayed{"", 200, size}, "holds 1060922 bytes, more than the node's file: starting over"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, n.name)
				os.WriteFile(out+".part", tt.part, 0o644)
				if tt.etag != "" {
					os.WriteFile(out+".etag.part", []byte(tt.etag+"\n"), 0o644)
				}
				r, u := newRelay(t, n.api, 0, -1)
				args := []string{"get", "--api", u, n.h.IPFS}
				if tt.o {
					args = append(args, "-o", n.name)
				}
				stdout, errOut, code := getIn(t, dir, args...)
				if code != 0 || stdout != strings.Replace(saved, "%s", n.name, 1) || !strings.Contains(errOut, tt.wantSay) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want it to say %q", code, stdout, errOut, tt.wantSay)
				}
				if got := r.requests(); !slices.Contains(got, tt.want) {
					t.Errorf("requests (Range, status, bytes of the file) %v; want one %v", got, tt.want)
				}
				sameFile(t, out, n.bytes)
				only(t, dir, n.name)
			})
		}
	})

	// The bytes FILE.part holds are kept, not fetched again: wrong ones
	// there fail the check of the whole file. They are moved aside, and
	// the next attempt starts anew.
	t.Run("resume of wrong bytes", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, n.name)
		os.WriteFile(out+".part", make([]byte, 300_000), 0o644)
		os.WriteFile(out+".etag.part", []byte(`"`+n.h.Canonical+`"`), 0o644)
		_, errOut, code := getIn(t, dir, "get", "--api", n.api, n.h.IPFS)
		if code != 1 || !strings.Contains(errOut, "the 1060921 bytes saved do not match "+n.h.IPFS+": their CIDs are ") ||
			!strings.Contains(errOut, "they are in "+n.name+".corrupt.part") {
			t.Fatalf("exit %d, stderr %q; want 1 and the mismatch", code, errOut)
		}
		bad, _ := os.ReadFile(out + ".corrupt.part")
		if !bytes.Equal(bad[:300_000], make([]byte, 300_000)) || !bytes.Equal(bad[300_000:], n.bytes[300_000:]) {
			t.Errorf("%s.corrupt.part is not the kept zeros and the rest of the file", n.name)
		}
		only(t, dir, n.name+".corrupt.part")
		if stdout, errOut, code := getIn(t, dir, "get", "--api", n.api, n.h.IPFS); code != 0 || stdout != strings.Replace(saved, "%s", n.name, 1) || strings.Contains(errOut, "resuming") {
			t.Fatalf("the next attempt: exit %d, stdout %q, stderr %q", code, stdout, errOut)
		}
		sameFile(t, out, n.bytes)
	})

	// A byte damaged on the way fails the check, to a file and to
	// stdout.
	t.Run("damaged on the way", func(t *testing.T) {
		_, u := newRelay(t, n.api, 0, 700_000)
		dir := t.TempDir()
		_, errOut, code := getIn(t, dir, "get", "--api", u, n.h.SHA256)
		if code != 1 || !strings.Contains(errOut, "do not match "+n.h.SHA256) {
			t.Errorf("to a file: exit %d, stderr %q", code, errOut)
		}
		only(t, dir, n.name+".corrupt.part")
		stdout, errOut, code := getIn(t, dir, "get", "--api", u, n.h.SHA256, "-o", "-")
		if code != 1 || int64(len(stdout)) != size || !strings.Contains(errOut, "the 1060921 bytes written to stdout do not match "+n.h.SHA256) {
			t.Errorf("to stdout: exit %d, %d bytes, stderr %q", code, len(stdout), errOut)
		}
	})

	// A node that stops sending is given up after --stall, and what
	// came is kept for the next attempt, which resumes it.
	t.Run("stalled", func(t *testing.T) {
		_, u := newRelay(t, n.api, 100<<10, -1)
		dir := t.TempDir()
		_, errOut, code := getIn(t, dir, "get", "--api", u, n.h.IPFS, "--stall", "1s")
		want := "metamesh: the node sent nothing for 1s after 100.0 KiB (--stall); " + n.name + ".part holds the 102400 bytes saved: the same command resumes\n"
		if code != 1 || errOut != want {
			t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
		}
		only(t, dir, n.name+".etag.part", n.name+".part")
		stdout, errOut, code := getIn(t, dir, "get", "--api", n.api, n.h.IPFS)
		if code != 0 || stdout != strings.Replace(saved, "%s", n.name, 1) || errOut != "resuming "+n.name+" after 100.0 KiB\n" {
			t.Fatalf("the next attempt: exit %d, stdout %q, stderr %q", code, stdout, errOut)
		}
		sameFile(t, filepath.Join(dir, n.name), n.bytes)
	})

	t.Run("refused", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "here.mkv"), []byte("mine"), 0o644)
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name     string
			args     []string
			wantCode int
			wantErr  string
		}{
			{"not a CID", []string{"garbage"}, 2, `metamesh: invalid CID "garbage": `},
			{"a file, not a CID", []string{"here.mkv"}, 2, "metamesh: here.mkv is a file here, and get takes a CID (metamesh hash here.mkv prints the file's CIDs)"},
			{"no one has it", []string{"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"}, 3, "(HTTP 404)"},
			{"a file in the way", []string{n.h.IPFS, "-o", "here.mkv"}, 1, "metamesh: here.mkv already exists: --force replaces it"},
			{"the node's name in the way", []string{n.h.IPFS, "-o", "."}, 0, ""},
			{"again, the node's name in the way", []string{n.h.IPFS}, 1, "metamesh: " + n.name + " already exists: --force replaces it"},
			{"not a regular file, even with --force", []string{n.h.IPFS, "-o", "fifo", "--force"}, 1, "metamesh: fifo is not a regular file (a FIFO), which get never replaces: -o names a file to save, -o - writes to stdout"},
			{"no such directory", []string{n.h.IPFS, "-o", "nowhere/film.mkv"}, 1, "metamesh: -o nowhere/film.mkv: no directory nowhere to save it in"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, errOut, code := getIn(t, dir, append([]string{"get", "--api", n.api}, tt.args...)...)
				if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tt.wantCode, tt.wantErr)
				}
			})
		}
		sameFile(t, filepath.Join(dir, "here.mkv"), []byte("mine"))
		only(t, dir, n.name, "fifo", "here.mkv")
	})
}

// TestGet_Usage: a wrong number of arguments is a usage error.
func TestGet_Usage(t *testing.T) {
	for _, args := range [][]string{{"get"}, {"get", "a", "b"}} {
		out, errOut, code := metamesh(t, nil, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "\nUsage: metamesh get CID [-o FILE] [flags]\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and the usage line", args, code, out, errOut)
		}
	}
}

// A household saves a file only a friend's household has, by a CID it
// never looked up: metamesh get on the fetching node finds the file among
// its peers, streams it from the sharing one (over bitswap) and checks
// the saved file's CID; it is saved under the name its metadata gives.
func TestGet_FromAPeer(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := make([]byte, 2<<20+999)
	rand.Read(data)
	p := filepath.Join(lib, "Film (2001).mkv")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	aData, aAPI, aP2P := storetest.Dir(t), freeAddr(t), fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
	aID := nodeID(t, aData)
	startRun(t, aData, aAPI, "--library", lib, "--listen", aP2P, "--share-files")
	bAPI := freeAddr(t)
	startRun(t, storetest.Dir(t), bAPI, "--listen", "/ip4/127.0.0.1/tcp/0", "--bootstrap", aP2P+"/p2p/"+aID)
	// The fetching node has never looked the file up: get finds it.
	waiting.Until(t, "the fetching node to connect to the sharing one", func() string {
		resp, err := http.Get("http://" + bAPI + "/api/peers")
		if err != nil {
			return err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), aID) {
			return "not among its peers"
		}
		return ""
	})
	// B reached A, so A's API is up.
	if out, _, _ := getIn(t, t.TempDir(), "status", "--api", aAPI); !strings.Contains(out, "sharing       on: peers may fetch this household's files\n") {
		t.Errorf("the sharing node's status does not say it shares:\n%s", out)
	}
	dir := t.TempDir()
	out, errOut, code := getIn(t, dir, "get", "--api", bAPI, h.Canonical)
	if code != 0 || !strings.Contains(out, "CID verified") {
		t.Fatalf("metamesh get of a peer's file: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "saved Film (2001)") {
		t.Errorf("saved as %q, want the name its metadata gives", out)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files saved", len(ents))
	}
	sameFile(t, filepath.Join(dir, ents[0].Name()), data)
}
