package node_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
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
	deadline := waiting.After()
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
			t.Fatalf("no event with %q in %v", has, waiting.Guard)
		}
	}
}

func TestAPI_Events(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	writeOld(t, filepath.Join(lib, "first.mkv"), []byte(strings.Repeat("1", 3000)))
	var redisURL string
	n := startNodeWith(t, lib, func(cfg *node.Config) { redisURL = cfg.RedisURL })

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
	t.Run("from the start", func(t *testing.T) {
		// 0-0 replays the whole stream: nothing was trimmed, so no reset.
		_, all := subscribe(t, n, "0-0")
		if e := next(t, all, ""); e.event != "" {
			t.Errorf("first event from 0-0: %q %s, want the stream's first entry", e.event, e.data)
		}
		next(t, all, "first.mkv")
	})
	t.Run("ahead", func(t *testing.T) {
		code, _ := subscribe(t, n, "99999999999999-0")
		if code != http.StatusBadRequest {
			t.Errorf("a Last-Event-ID newer than every event: status %d, want 400", code)
		}
	})
	t.Run("reset", func(t *testing.T) {
		// Entries after the resume position were trimmed (as the capped
		// stream does): the client is told to reload.
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		if err := rdb.XTrimMaxLen(context.Background(), "meta:events", 1).Err(); err != nil {
			t.Fatal(err)
		}
		_, old := subscribe(t, n, add.id)
		e := next(t, old, "reload")
		if e.event != "reset" || e.id == "" {
			t.Errorf("got event %q id %q, want a reset with the new position", e.event, e.id)
		}
	})
}

// TestAPI_EventsPathCIDs: path events carry the CID of the file the path
// holds (or, deleted, held) while that file exists, and the exact bytes
// of a name that is not UTF-8.
func TestAPI_EventsPathCIDs(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	a := filepath.Join(lib, "a.mkv")
	writeOld(t, a, []byte(strings.Repeat("a", 5000)))
	n := startNodeWith(t, lib, nil)
	ca := canonicalOf(t, a)
	_, live := subscribe(t, n, "")
	event := func(typ, path string) map[string]any {
		t.Helper()
		for {
			e := next(t, live, `"path":"`+path+`"`)
			var ev map[string]any
			if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
				t.Fatal(err)
			}
			if ev["type"] == typ {
				return ev
			}
		}
	}
	b, c := filepath.Join(lib, "b.mkv"), filepath.Join(lib, "c.mkv")
	os.WriteFile(b, []byte(strings.Repeat("a", 5000)), 0o644)
	if ev := event("add", b); ev["cid"] != ca {
		t.Errorf("add of a duplicate: cid %v, want %s", ev["cid"], ca)
	}
	// The add is told when the path arrives; its hash pass may still run.
	// A rename during it is another case (the store moved on: a delete
	// and an add), so the rename waits for the ingester to be idle.
	if err := n.Ingester().WaitIdle(waiting.Context(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b, c); err != nil {
		t.Fatal(err)
	}
	if ev := event("rename", c); ev["cid"] != ca || ev["oldPath"] != b {
		t.Errorf("rename: %v, want cid %s oldPath %s", ev, ca, b)
	}
	os.Remove(c)
	if ev := event("delete", c); ev["cid"] != ca {
		t.Errorf("delete of one of two paths: cid %v, want %s", ev["cid"], ca)
	}
	os.WriteFile(a, []byte(strings.Repeat("A", 6000)), 0o644)
	ev := event("change", a)
	if cur := canonicalOf(t, a); ev["cid"] != cur {
		t.Errorf("change: cid %v, want the new content's %s", ev["cid"], cur)
	}
	os.Remove(a)
	if ev := event("delete", a); ev["cid"] != nil {
		t.Errorf("delete of a file's last path: cid %v, want none", ev["cid"])
	}
	odd := filepath.Join(lib, "odd\xffname.mkv")
	os.WriteFile(odd, []byte("odd bytes"), 0o644)
	ev = event("add", filepath.Join(lib, `odd\ufffdname.mkv`))
	if got, _ := ev["pathBytes"].(string); got != base64.StdEncoding.EncodeToString([]byte(odd)) {
		t.Errorf("pathBytes %q, want the exact name %q in base64", got, odd)
	}
}

// TestAPI_EventsShutdown: a node with an open event stream stops cleanly,
// ending the stream.
func TestAPI_EventsShutdown(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	n := startNodeWith(t, lib, nil)
	code, live := subscribe(t, n, "")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close with an open event stream: %v", err)
	}
	for range live { // the stream ends
	}
}

func TestAPI_Metrics(t *testing.T) {
	t.Parallel()
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
		"metamesh_meta_cache_documents", "metamesh_meta_cache_hits_total", "metamesh_meta_cache_misses_total",
		// Alone: nothing checked, its one region not provided.
		"metamesh_provide_findable_closest 0", "metamesh_provide_findable_holding 0", "metamesh_provide_checks_total 0",
		"metamesh_provide_check_messages_total 0", "metamesh_provide_oldest_region_provided_timestamp_seconds 0",
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
