package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store"
)

// hangFS is the library's file system whose looks at a root block, while
// hung is set, until release is closed: a mount that stops answering.
type hangFS struct {
	fileSystem
	hung    *atomic.Bool
	release chan struct{}
}

func (h hangFS) Root(lib string) (rootLook, error) {
	if h.hung.Load() {
		<-h.release
	}
	return h.fileSystem.Root(lib)
}

// A library whose root stops answering is unavailable: a file deleted
// meanwhile is not deleted from the store; once the root answers again
// the library is rescanned, and the file, gone from an available
// library now, is deleted.
func TestLibrary_NotAnswering(t *testing.T) {
	hung := &atomic.Bool{}
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	in, s, dir, logs := setup(t, true, func(in *Ingester) {
		in.cfg.LibraryCheck, in.cfg.LibraryTimeout = 20*time.Millisecond, 100*time.Millisecond
		in.fs = hangFS{fileSystem: in.fs, hung: hung, release: release}
	})
	a := filepath.Join(dir, "a.bin")
	write(t, a, 3000)
	waiting.For(t, "a.bin to be stored", func() bool { return stored(s, a) })
	waitIdle(t, in)
	before, _ := s.Events(context.Background(), "", 1000)

	hung.Store(true)
	waiting.For(t, "the library to be unavailable", func() bool { return !in.Libraries()[0].Available })
	if r := in.Libraries()[0].Reason; !strings.Contains(r, "did not answer within 100ms") {
		t.Errorf("reason = %q", r)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	// The worker's delete looks at the root first: it finds it not
	// answering, and keeps the path.
	in.Touch(a)
	waitIdle(t, in)
	if !stored(s, a) {
		t.Fatal("a file of a library that does not answer was deleted")
	}

	hung.Store(false)
	close(release)
	waiting.For(t, "the library to be available again", func() bool { return in.Libraries()[0].Available })
	waiting.For(t, "the file gone from the available library to be deleted", func() bool { return !stored(s, a) })
	after, _ := s.Events(context.Background(), "", 1000)
	deletes := 0
	for _, e := range after[len(before):] {
		if e.Type == store.EventDelete {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("delete events = %d, want 1 (after the return)", deletes)
	}
	for _, want := range []string{"library unavailable: " + dir + ": its directory did not answer", "library available again: " + dir} {
		if strings.Count(logs.String(), want) != 1 {
			t.Errorf("log has %q %d times, want once:\n%s", want, strings.Count(logs.String(), want), logs)
		}
	}
	consistent(t, s)
}
