package node_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// An outside writer's field appears in /api/meta while the node runs and
// vanishes with the root.
func TestNode_OutsideWriterField(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	p := filepath.Join(lib, "film.bin")
	if err := os.WriteFile(p, []byte("some film bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, srv := startNode(t, lib)
	st, err := n.Store().Path(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := n.Store().Document(context.Background(), st.Root)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := redis.ParseURL(srv.URL())
	other := redis.NewClient(opts)
	defer other.Close()
	key := "file:" + string(st.Root) + "/tmdb/id"
	if err := other.Set(context.Background(), key, "27205", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cid := doc.CanonicalCID()
	deadline := time.Now().Add(time.Minute)
	for {
		code, m := get(t, n, http.MethodGet, "/api/meta/"+cid)
		if tm, _ := m["tmdb"].(map[string]any); code == 200 && tm["id"] == "27205" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outside field never showed: %d %v", code, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := other.Exists(context.Background(), key).Result()
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outside field outlived its root: %d %v", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := get(t, n, http.MethodGet, "/api/meta/"+cid); code != http.StatusNotFound {
		t.Errorf("after delete: %d", code)
	}
}
