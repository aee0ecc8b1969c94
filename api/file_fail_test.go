package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// failingBackend serves one file whose reads fail once they reach at.
type failingBackend struct {
	*fakeBackend
	data []byte
	at   int64
	err  error
}

type failAt struct {
	*bytes.Reader
	at  int64
	err error
}

func (f *failAt) Read(p []byte) (int, error) {
	pos, _ := f.Seek(0, io.SeekCurrent)
	if pos >= f.at {
		return 0, f.err
	}
	if left := f.at - pos; int64(len(p)) > left {
		p = p[:left]
	}
	return f.Reader.Read(p)
}

func (f *failAt) Close() error { return nil }

func (b *failingBackend) File(_ context.Context, c string) (*api.File, error) {
	return &api.File{Content: &failAt{bytes.NewReader(b.data), b.at, b.err}, Name: "film.mkv", Size: int64(len(b.data)),
		ModTime: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), CID: c}, nil
}

// A file whose bytes cannot be read as they are is never answered as a
// complete 200: a read that fails before the first byte is the answer
// (its status and JSON error, none of the headers that describe the
// bytes), and one that fails after it cuts the stream, so the client
// sees it incomplete.
func TestFile_ReadFails(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("metamesh"), 128<<10) // 1 MiB
	changed := fmt.Errorf("%w: film.mkv changed on disk since it was hashed", api.ErrConflict)
	for _, tc := range []struct {
		name  string
		at    int64
		err   error
		rng   string
		code  int    // 0: the stream is cut
		msg   string // in the JSON error
		bytes int    // read before the cut
	}{
		{name: "changed before the first byte", at: 0, err: changed, code: http.StatusConflict, msg: "changed on disk"},
		{name: "a range in the changed part", at: 1000, err: changed, rng: "bytes=2000-2100", code: http.StatusConflict, msg: "changed on disk"},
		{name: "another error before the first byte", at: 0, err: errors.New("the fetch stalled"), code: http.StatusServiceUnavailable, msg: "reading the file's bytes failed: the fetch stalled"},
		{name: "changed after the first byte", at: 300 << 10, err: changed, bytes: 300 << 10},
		{name: "a range that reaches the changed part", at: 300 << 10, err: changed, rng: "bytes=1000-", bytes: 300<<10 - 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := &failingBackend{fakeBackend: &fakeBackend{}, data: data, at: tc.at, err: tc.err}
			ts := httptest.NewServer(newServer(b, api.Options{}))
			t.Cleanup(ts.Close)
			req, _ := http.NewRequestWithContext(waiting.Context(t), "GET", ts.URL+"/api/file/bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", nil)
			if tc.rng != "" {
				req.Header.Set("Range", tc.rng)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, rerr := io.ReadAll(resp.Body)
			if tc.code != 0 {
				var e struct{ Error string }
				if resp.StatusCode != tc.code || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, tc.msg) {
					t.Fatalf("%s %q, want %d with an error saying %q", resp.Status, body, tc.code, tc.msg)
				}
				for _, h := range []string{"ETag", "Cache-Control", "Content-Range", "Last-Modified", "Content-Disposition"} {
					if v := resp.Header.Get(h); v != "" {
						t.Errorf("an error answer carries %s: %s", h, v)
					}
				}
				return
			}
			if rerr == nil || len(body) != tc.bytes {
				t.Fatalf("%s: %d bytes, then %v; want the stream cut after %d bytes", resp.Status, len(body), rerr, tc.bytes)
			}
		})
	}
}
