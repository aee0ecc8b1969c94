package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/node"
)

// sseEvent is one server-sent event as read off the wire.
type sseEvent struct{ id, event, data string }

// subscribe opens GET /api/events (resuming after last when not "") and
// returns a channel of its events; the stream closes with the test.
func subscribe(t *testing.T, n *node.Node, last string) (int, <-chan sseEvent) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+n.APIAddr()+"/api/events", nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan sseEvent, 100)
	if resp.StatusCode != 200 {
		resp.Body.Close()
		close(ch)
		return resp.StatusCode, ch
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.data != "" {
					ch <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
	}()
	return resp.StatusCode, ch
}

// next waits for the next event whose data contains has.
func next(t *testing.T, ch <-chan sseEvent, has string) sseEvent {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended waiting for %q", has)
			}
			if strings.Contains(e.data, has) {
				return e
			}
		case <-deadline:
			t.Fatalf("no event with %q", has)
		}
	}
}

func TestAPI_Events(t *testing.T) {
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	writeOld(t, filepath.Join(lib, "first.mkv"), []byte(strings.Repeat("1", 3000)))
	n := startNodeWith(t, lib, nil)

	code, live := subscribe(t, n, "")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	p := filepath.Join(lib, "second.mkv")
	os.WriteFile(p, []byte(strings.Repeat("2", 3000)), 0o644)
	add := next(t, live, `"path":"`+p+`"`)
	var ev map[string]any
	if err := json.Unmarshal([]byte(add.data), &ev); err != nil {
		t.Fatal(err)
	}
	if add.id == "" || ev["id"] != add.id {
		t.Errorf("SSE id %q, data id %v", add.id, ev["id"])
	}
	if _, ok := ev["root"]; ok {
		t.Errorf("event carries a root ID: %s", add.data)
	}
	// A key-set event names the file by its canonical CID.
	c := canonicalOf(t, p)
	confirm := next(t, live, `"cid":"`+c+`"`)

	t.Run("resume", func(t *testing.T) {
		// Resuming after the add replays what followed it, the confirm
		// included, and nothing before it.
		_, resumed := subscribe(t, n, add.id)
		got := next(t, resumed, `"cid":"`+c+`"`)
		if !idAfter(got.id, add.id) || idAfter(got.id, confirm.id) {
			t.Errorf("resumed event %q is not in (%q, %q]", got.id, add.id, confirm.id)
		}
	})
	t.Run("reset", func(t *testing.T) {
		// An ID older than the stream's first entry was trimmed.
		_, old := subscribe(t, n, "1-0")
		e := next(t, old, "reload")
		if e.event != "reset" || e.id == "" {
			t.Errorf("got event %q id %q, want a reset with the new position", e.event, e.id)
		}
	})
}

func TestAPI_Metrics(t *testing.T) {
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	writeOld(t, filepath.Join(lib, "m.mkv"), []byte(strings.Repeat("m", 3000)))
	n := startNodeWith(t, lib, nil)
	c := canonicalOf(t, filepath.Join(lib, "m.mkv"))
	do(t, n, "GET", "/api/meta/"+c+"?local=1", nil)
	resp, body := do(t, n, "GET", "/metrics", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, want := range []string{
		`metamesh_http_requests_total{code="200",route="GET /api/meta/{cid}"} 1`,
		`metamesh_lookups_total{result="found",source="local"} 1`,
		"metamesh_lookup_duration_seconds_bucket", "metamesh_http_request_duration_seconds_bucket",
		"metamesh_scan_files_done 1", "metamesh_scan_bytes_hashed", "metamesh_scan_files_hashed",
		"metamesh_hash_duration_seconds_count 1",
		`metamesh_scan_state{state="watching"} 1`, "metamesh_provides_done_total", "metamesh_provides_failed_total",
		"metamesh_provides_queued", "metamesh_peers 0", "go_goroutines", "process_",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// idAfter reports whether stream ID a comes after b.
func idAfter(a, b string) bool {
	var am, as, bm, bs uint64
	fmt.Sscanf(a, "%d-%d", &am, &as)
	fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return am > bm || am == bm && as > bs
}
