package node_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// getFile sends GET path with hdr and reads the whole body, returning
// the error that ended it (a stream cut short).
func getFile(t *testing.T, n *node.Node, path string, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(waiting.Context(t), "GET", "http://"+n.APIAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// changeInPlace overwrites 100 bytes of p at off and keeps its mtime (as
// `touch -r` would): its size and mtime say nothing moved.
func changeInPlace(t *testing.T, p string, off int64) []byte {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 100)
	rand.Read(junk)
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file changed in place under the same size and mtime is never served
// by GET /api/file as a complete answer under its old CID: a stream that
// reaches the changed block is cut short (the client sees it
// incomplete), a range that starts in it is answered 409, and a small
// file (not in the block index) is checked by its midhash sample before
// the first byte. Each file is hashed again, and then served under its
// new CID.
func TestAPI_FileChangedInPlace(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string][]byte{}
	for _, name := range []string{"Whole.bin", "Range.bin", "Small.bin"} {
		size := 3<<20 + 4321 // 13 leaves, in the block index
		if name == "Small.bin" {
			size = 600 << 10 // read whole at ingest: not indexed
		}
		files[name] = make([]byte, size)
		rand.Read(files[name])
		writeOld(t, filepath.Join(lib, name), files[name])
	}
	n, logs := startNodeLogged(t, lib, nil)
	ctx := waiting.Context(t)
	old := map[string]ingest.FileHashes{}
	for name := range files {
		h, err := ingest.HashFile(ctx, filepath.Join(lib, name))
		if err != nil {
			t.Fatal(err)
		}
		old[name] = h
		resp, body, err := getFile(t, n, "/api/file/"+h.SHA256, nil)
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, files[name]) {
			t.Fatalf("GET %s before the change: %v %v, %d bytes", name, resp, err, len(body))
		}
	}

	// The whole file: the change is in its sixth block, after 1.25 MiB
	// went out.
	const changedAt = 5*dag.ChunkSize + 1000
	changed := map[string][]byte{}
	changed["Whole.bin"] = changeInPlace(t, filepath.Join(lib, "Whole.bin"), changedAt)
	resp, body, err := getFile(t, n, "/api/file/"+old["Whole.bin"].SHA256, nil)
	if err == nil && resp.StatusCode == 200 && bytes.Equal(body, changed["Whole.bin"]) {
		t.Fatalf("the changed file was served whole, 200 under ETag %s", resp.Header.Get("ETag"))
	}
	if resp != nil && resp.StatusCode == 200 && (err == nil || len(body) > changedAt-1000 || !bytes.Equal(body, files["Whole.bin"][:len(body)])) {
		t.Fatalf("the stream of a changed file: %d bytes (%v); want it cut before the changed block, every byte as hashed", len(body), err)
	}
	t.Logf("GET of the changed file: %v, %d bytes, then %v", statusOf(resp), len(body), err)

	// A range that starts in the changed block: nothing goes out.
	changed["Range.bin"] = changeInPlace(t, filepath.Join(lib, "Range.bin"), changedAt)
	rng := fmt.Sprintf("bytes=%d-%d", changedAt-10, changedAt+10)
	resp, body, err = getFile(t, n, "/api/file/"+old["Range.bin"].SHA256, map[string]string{"Range": rng})
	if err != nil || resp.StatusCode != http.StatusConflict || resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") != "" {
		t.Fatalf("a range in the changed block: %v, %v, %q", statusOf(resp), err, body)
	}
	var e struct{ Error string }
	if json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, "Range.bin changed on disk since it was hashed") {
		t.Errorf("the 409's body %q does not say the file changed", body)
	}

	// A small file: its midhash sample is the whole file.
	changed["Small.bin"] = changeInPlace(t, filepath.Join(lib, "Small.bin"), 300<<10)
	resp, body, err = getFile(t, n, "/api/file/"+old["Small.bin"].SHA256, nil)
	if err != nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("a changed small file: %v, %v, %q", statusOf(resp), err, body)
	}

	for name, now := range changed {
		h, err := ingest.HashFile(ctx, filepath.Join(lib, name))
		if err != nil {
			t.Fatal(err)
		}
		waiting.For(t, name+" to be hashed again and served under its new CID", func() bool {
			resp, body, err := getFile(t, n, "/api/file/"+h.SHA256, nil)
			return err == nil && resp.StatusCode == 200 && bytes.Equal(body, now) && resp.Header.Get("ETag") == `"`+h.Canonical+`"`
		})
		if resp, _, _ := getFile(t, n, "/api/file/"+old[name].SHA256, nil); resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s's old CID: %v, want 404", name, statusOf(resp))
		}
	}
	if c := strings.Count(logs.String(), `msg="a library file changed since it was hashed (its size and mtime did not move)`); c < 3 {
		t.Errorf("the node said %d times that a file changed, want at least once a file:\n%s", c, logs.String())
	}
}

func statusOf(resp *http.Response) string {
	if resp == nil {
		return "no answer"
	}
	return resp.Status
}
