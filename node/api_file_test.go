package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// fileBody is 4 KiB of known bytes: byte i is 'a'+i%26.
func fileBody() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func TestAPI_File(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	body := fileBody()
	p := filepath.Join(lib, "Some Movie (2010).mkv")
	writeOld(t, p, body)
	n := startNodeWith(t, lib, nil)
	c := canonicalOf(t, p)
	etag := `"` + c + `"`

	tests := []struct {
		name, method string
		hdr          map[string]string
		code         int
		want         string // body; "" to skip
		check        func(t *testing.T, h map[string][]string, body []byte)
	}{
		{name: "whole", method: "GET", code: 200, want: string(body)},
		{name: "head", method: "HEAD", code: 200, check: func(t *testing.T, h map[string][]string, b []byte) {
			if len(b) != 0 || h["Content-Length"][0] != "4096" {
				t.Errorf("HEAD: body %d bytes, Content-Length %v", len(b), h["Content-Length"])
			}
		}},
		{name: "single range", method: "GET", hdr: map[string]string{"Range": "bytes=10-19"}, code: 206, want: string(body[10:20]),
			check: func(t *testing.T, h map[string][]string, _ []byte) {
				if got := h["Content-Range"][0]; got != "bytes 10-19/4096" {
					t.Errorf("Content-Range %q", got)
				}
			}},
		{name: "suffix range", method: "GET", hdr: map[string]string{"Range": "bytes=-5"}, code: 206, want: string(body[4091:])},
		{name: "multi range", method: "GET", hdr: map[string]string{"Range": "bytes=0-1,100-101"}, code: 206,
			check: func(t *testing.T, h map[string][]string, b []byte) {
				if ct := h["Content-Type"][0]; !strings.HasPrefix(ct, "multipart/byteranges; boundary=") {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(string(b), "Content-Type: text/plain") || !strings.Contains(string(b), "bytes 100-101/4096") ||
					!strings.Contains(string(b), string(body[100:102])) {
					t.Errorf("multipart body %q", b)
				}
			}},
		{name: "unsatisfiable", method: "GET", hdr: map[string]string{"Range": "bytes=5000-6000"}, code: 416,
			check: jsonError("bytes */4096", `Range "bytes=5000-6000": no range starts inside the file's 4096 bytes`)},
		{name: "far past the end", method: "GET", hdr: map[string]string{"Range": "bytes=5000000-5000010"}, code: 416,
			check: jsonError("bytes */4096", `Range "bytes=5000000-5000010": no range starts inside the file's 4096 bytes`)},
		{name: "malformed range", method: "GET", hdr: map[string]string{"Range": "bytes=abc"}, code: 416,
			check: jsonError("", `Range "bytes=abc" is malformed`)},
		{name: "malformed range, head", method: "HEAD", hdr: map[string]string{"Range": "bytes=abc"}, code: 416,
			check: func(t *testing.T, h map[string][]string, b []byte) {
				if len(b) != 0 || h["Content-Type"][0] != "application/json" {
					t.Errorf("HEAD 416: body %q, Content-Type %v", b, h["Content-Type"])
				}
			}},
		{name: "range past the end, other If-Range", method: "GET", hdr: map[string]string{"Range": "bytes=5000-6000", "If-Range": `"bafkother"`}, code: 200, want: string(body)},
		{name: "malformed range, if-none-match", method: "GET", hdr: map[string]string{"Range": "bytes=abc", "If-None-Match": etag}, code: 304},
		{name: "if-match other", method: "GET", hdr: map[string]string{"If-Match": `"bafkother"`}, code: 412,
			check: jsonError("", "precondition"+` (If-Match, If-Unmodified-Since) does not hold: the file's ETag is `+etag)},
		{name: "if-match same", method: "GET", hdr: map[string]string{"If-Match": etag, "Range": "bytes=1-2"}, code: 206, want: string(body[1:3])},
		{name: "if-none-match", method: "GET", hdr: map[string]string{"If-None-Match": etag}, code: 304},
		{name: "if-none-match other", method: "GET", hdr: map[string]string{"If-None-Match": `"bafkother"`}, code: 200, want: string(body)},
		{name: "if-range same", method: "GET", hdr: map[string]string{"Range": "bytes=0-3", "If-Range": etag}, code: 206, want: string(body[:4])},
		{name: "if-range other", method: "GET", hdr: map[string]string{"Range": "bytes=0-3", "If-Range": `"bafkother"`}, code: 200, want: string(body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := do(t, n, tt.method, "/api/file/"+c, tt.hdr)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.code, b)
			}
			if tt.want != "" && string(b) != tt.want {
				t.Errorf("body %q, want %q", b, tt.want)
			}
			if tt.code < 300 {
				h := resp.Header
				if got := h.Get("ETag"); got != etag {
					t.Errorf("ETag %q, want %q", got, etag)
				}
				if got := h.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
					t.Errorf("Cache-Control %q", got)
				}
				if got := h.Get("Content-Disposition"); got != `inline; filename="Some Movie (2010).mkv"` {
					t.Errorf("Content-Disposition %q", got)
				}
				if got := h.Get("Content-Type"); tt.name != "multi range" && got != "text/plain" /* the stored mimeType, from the bytes */ {
					t.Errorf("Content-Type %q", got)
				}
			}
			if tt.check != nil {
				tt.check(t, resp.Header, b)
			}
		})
	}
}

// jsonError checks an error answer of /api/file: JSON whose error
// contains msg, Content-Range contentRange ("" for none), and none of the
// headers of the bytes.
func jsonError(contentRange, msg string) func(t *testing.T, h map[string][]string, body []byte) {
	return func(t *testing.T, h map[string][]string, body []byte) {
		t.Helper()
		hd := http.Header(h)
		if ct := hd.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("body %q is not JSON", body)
		}
		if e, _ := m["error"].(string); !strings.Contains(e, msg) {
			t.Errorf("error %q, want it to contain %q", e, msg)
		}
		if got := hd.Get("Content-Range"); got != contentRange {
			t.Errorf("Content-Range %q, want %q", got, contentRange)
		}
		for _, k := range []string{"ETag", "Cache-Control", "Last-Modified", "Content-Disposition"} {
			if v := hd.Get(k); v != "" {
				t.Errorf("error answer with %s %q", k, v)
			}
		}
	}
}

// TestAPI_FileNames: Content-Disposition is a valid header for any name:
// an ASCII filename= and, when the name is not that, filename*= with the
// name as UTF-8 (bytes that are not UTF-8 replaced by U+FFFD).
func TestAPI_FileNames(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	tests := []struct {
		name   string // on disk
		header string
		parsed string // the name a client reads (mime.ParseMediaType prefers filename*)
	}{
		{"plain.mkv", "inline; filename=plain.mkv", "plain.mkv"},
		{"Some Movie (2010).mkv", `inline; filename="Some Movie (2010).mkv"`, "Some Movie (2010).mkv"},
		{"bad\xffname.mkv", "inline; filename=bad_name.mkv; filename*=UTF-8''bad%EF%BF%BDname.mkv", "bad\uFFFDname.mkv"},
		{"bad\xc3\x28\xa0.mkv", `inline; filename="bad_(_.mkv"; filename*=UTF-8''bad%EF%BF%BD%28%EF%BF%BD.mkv`, "bad\uFFFD(\uFFFD.mkv"},
		{"Say \"Hi\" \\ Am\u00e9lie 日本.mkv", `inline; filename="Say _Hi_ _ Amelie __.mkv"; filename*=UTF-8''Say%20%22Hi%22%20%5C%20Am%C3%A9lie%20%E6%97%A5%E6%9C%AC.mkv`,
			"Say \"Hi\" \\ Am\u00e9lie 日本.mkv"},
		{"tab\there;x=1.mkv", `inline; filename="tab_here;x=1.mkv"; filename*=UTF-8''tab%09here%3Bx%3D1.mkv`, "tab\there;x=1.mkv"},
	}
	cids := make([]string, len(tests))
	for i, tt := range tests {
		p := filepath.Join(lib, tt.name)
		writeOld(t, p, []byte(strings.Repeat(string(rune('a'+i)), 3000)))
		cids[i] = canonicalOf(t, p)
	}
	n := startNodeWith(t, lib, nil)
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.name), func(t *testing.T) {
			resp, b := do(t, n, "GET", "/api/file/"+cids[i], nil)
			if resp.StatusCode != 200 || len(b) != 3000 {
				t.Fatalf("status %d, %d bytes: %.200s", resp.StatusCode, len(b), b)
			}
			d := resp.Header.Get("Content-Disposition")
			if d != tt.header {
				t.Errorf("Content-Disposition %q\n                      want %q", d, tt.header)
			}
			for j := 0; j < len(d); j++ {
				if d[j] < ' ' || d[j] > '~' {
					t.Fatalf("Content-Disposition %q holds byte %#x", d, d[j])
				}
			}
			disp, params, err := mime.ParseMediaType(d)
			if err != nil || disp != "inline" || params["filename"] != tt.parsed {
				t.Errorf("ParseMediaType(%q) = %q %q %v, want the name %q", d, disp, params, err, tt.parsed)
			}
		})
	}
}

func TestAPI_FileErrors(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	writeOld(t, filepath.Join(lib, "a.mkv"), []byte(strings.Repeat("a", 3000)))
	writeOld(t, filepath.Join(lib, "link.mkv"), []byte(strings.Repeat("l", 3000)))
	writeOld(t, filepath.Join(lib, "stale.mkv"), []byte(strings.Repeat("s", 3000)))
	writeOld(t, filepath.Join(outside, "secret.mkv"), []byte(strings.Repeat("x", 3000)))
	writeOld(t, filepath.Join(outside, "dotdot.mkv"), []byte(strings.Repeat("d", 3000)))
	// A settle time no test waits out: a file changed after the scan stays
	// as the store knew it.
	n := startNodeWith(t, lib, func(c *node.Config) { c.Settle = time.Hour })
	ctx := context.Background()
	st := n.Store()

	// What the store says may point outside the libraries: another writer,
	// an old configuration. Record two such files as confirmed.
	register := func(path, real string) string {
		t.Helper()
		h, err := ingest.HashFile(ctx, real)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(real)
		fs := store.FileStat{Path: path, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
		if _, err := st.Arrive(ctx, fs, h.Midhash); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Confirm(ctx, fs, h.Store()); err != nil {
			t.Fatal(err)
		}
		return h.Canonical
	}
	outsideCID := register(filepath.Join(outside, "secret.mkv"), filepath.Join(outside, "secret.mkv"))
	dotdotCID := register(lib+"/../"+filepath.Base(outside)+"/dotdot.mkv", filepath.Join(outside, "dotdot.mkv"))

	// A symlink out of the library in place of an ingested file.
	linkCID := canonicalOf(t, filepath.Join(lib, "link.mkv"))
	os.Remove(filepath.Join(lib, "link.mkv"))
	if err := os.Symlink(filepath.Join(outside, "secret.mkv"), filepath.Join(lib, "link.mkv")); err != nil {
		t.Fatal(err)
	}
	// A file rewritten after it was hashed.
	staleCID := canonicalOf(t, filepath.Join(lib, "stale.mkv"))
	os.WriteFile(filepath.Join(lib, "stale.mkv"), []byte(strings.Repeat("S", 3001)), 0o644)

	// A file known only from a peer: a root without a path.
	peerCID := "bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am"
	root, err := st.Mint(ctx, store.FileStat{})
	if err == nil {
		err = st.AddAlias(ctx, root, peerCID)
	}
	peerOK := err == nil

	tests := []struct {
		name, path string
		code       int
		errHas     string
	}{
		{"unknown", "/api/file/bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", 404, "no file"},
		{"malformed", "/api/file/banana", 400, "invalid CID"},
		{"no cid", "/api/file/", 400, "missing CID"},
		{"after cid", "/api/file/" + linkCID + "/x", 404, "nothing after the CID"},
		{"outside the libraries", "/api/file/" + outsideCID, 404, "inside the libraries"},
		{"dot-dot", "/api/file/" + dotdotCID, 404, "inside the libraries"},
		{"symlink out", "/api/file/" + linkCID, 404, "not readable inside its library"},
		{"stale", "/api/file/" + staleCID, 409, "changed on disk"},
		{"stale again", "/api/file/" + staleCID, 409, "changed on disk"},
		{"traversal in the URL", "/api/file/../../etc/passwd", 404, "not in clean form"},
		{"query", "/api/file/" + linkCID + "?x=1", 400, "unknown query parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := do(t, n, "GET", tt.path, nil)
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.errHas) {
				t.Fatalf("status %d %s, want %d with %q", resp.StatusCode, b, tt.code, tt.errHas)
			}
			if resp.Header.Get("ETag") != "" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("error answer with ETag %q, Content-Type %q", resp.Header.Get("ETag"), resp.Header.Get("Content-Type"))
			}
		})
	}
	if peerOK {
		t.Run("known only from peers", func(t *testing.T) {
			resp, b := do(t, n, "GET", "/api/file/"+peerCID, nil)
			var m map[string]any
			json.Unmarshal(b, &m)
			if resp.StatusCode != 404 || m["providers"] == nil {
				t.Fatalf("status %d %s, want 404 with providers", resp.StatusCode, b)
			}
		})
	}
}

// A CID a peer's record paired with a local file names other bytes as far
// as this node knows: /api/file serves the file only under the CIDs the
// node computed from its bytes.
func TestAPI_FileOnlyUnderOwnCIDs(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(lib, "Song.Beta.mp3")
	writeOld(t, p, []byte(strings.Repeat("song ", 4000)))
	n := startNodeWith(t, lib, nil)
	h, err := ingest.HashFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte("another file's bytes"))
	foreign, _ := protocol.SHA256CID(d[:])
	if _, err := n.Store().MergeRecord(context.Background(), "12D3KooWPeerThatPairedIt", []string{h.SHA256, foreign.String()}, nil); err != nil {
		t.Fatal(err)
	}
	resp, body := do(t, n, "GET", "/api/file/"+foreign.String(), nil)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), h.SHA256) {
		t.Errorf("GET /api/file/<a CID a peer paired with the file>: %d %.200s, want 404 naming the file's own CID", resp.StatusCode, body)
	}
	for _, c := range []string{h.Midhash, h.SHA256, h.IPFS} {
		if resp, body := do(t, n, "GET", "/api/file/"+c, nil); resp.StatusCode != http.StatusOK || len(body) != 20000 {
			t.Errorf("GET /api/file/<own %s>: %d, %d bytes", c, resp.StatusCode, len(body))
		}
	}
}
