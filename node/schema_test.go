package node_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/internal/waiting"
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
	waiting.Until(t, "the outside field to show", func() string {
		code, m := get(t, n, http.MethodGet, "/api/meta/"+cid)
		if tm, _ := m["tmdb"].(map[string]any); code == 200 && tm["id"] == "27205" {
			return ""
		}
		return fmt.Sprintf("%d %v", code, m)
	})
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "the outside field to go with its root", func() string {
		left, err := other.Exists(context.Background(), key).Result()
		if err == nil && left == 0 {
			return ""
		}
		return fmt.Sprintf("it outlived its root: %d %v", left, err)
	})
	if code, _ := get(t, n, http.MethodGet, "/api/meta/"+cid); code != http.StatusNotFound {
		t.Errorf("after delete: %d", code)
	}
}
