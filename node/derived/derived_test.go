package derived_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/derived"
)

// logBuf is a log the test reads while the code under test writes it.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLog() (*slog.Logger, *logBuf) {
	b := &logBuf{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo})), b
}

// fill writes n keys into a database in dir and closes it, so that they
// are in a table.
func fill(t *testing.T, dir string, n int) {
	t.Helper()
	p, err := derived.OpenPebble(dir, "test store", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, _ := p.Batch(ctx)
	for i := range n {
		if err := b.Put(ctx, key(i), bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func key(i int) datastore.Key { return datastore.NewKey(fmt.Sprintf("/k/%06d", i)) }

// tables are the database's table files.
func tables(t *testing.T, dir string) []string {
	t.Helper()
	ts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ts) == 0 {
		t.Fatalf("no table in %s (%v)", dir, err)
	}
	return ts
}

// flip inverts n bytes of path from its middle.
func flip(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b)/2 - n/2; i < len(b)/2+n/2; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// aside is what was moved aside from dir.
func aside(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(dir + ".corrupt-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readAll reads every key (a query, then each key), and returns the
// first error.
func readAll(p *derived.Pebble, n int) error {
	ctx := context.Background()
	res, err := p.Query(ctx, query.Query{Prefix: "/k"})
	if err != nil {
		return err
	}
	_, err = res.Rest()
	for i := range n {
		if _, e := p.Get(ctx, key(i)); e != nil && err == nil {
			err = e
		}
	}
	return err
}

func TestPebble_Damaged(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"flipped bytes", func(t *testing.T, dir string) { flip(t, tables(t, dir)[0], 40) }},
		{"truncated table", func(t *testing.T, dir string) {
			ts := tables(t, dir)[0]
			fi, _ := os.Stat(ts)
			if err := os.Truncate(ts, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing table", func(t *testing.T, dir string) { os.Remove(tables(t, dir)[0]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "part")
			fill(t, dir, n)
			tc.damage(t, dir)
			log, logs := newLog()
			p, err := derived.OpenPebble(dir, "test store", log)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer p.Close()
			// Opened, or moved aside at open; read until every read
			// answers (a damage found by a read is moved aside once).
			waiting.For(t, "reads to answer again", func() bool {
				err := readAll(p, n)
				return len(aside(t, dir)) == 1 && (err == nil || errors.Is(err, datastore.ErrNotFound))
			})
			if got := len(aside(t, dir)); got != 1 {
				t.Errorf("moved aside %d times, want 1", got)
			}
			if !strings.Contains(logs.String(), "level=WARN msg=\"test store:") || !strings.Contains(logs.String(), "movedTo="+aside(t, dir)[0]) {
				t.Errorf("no WARN saying where it went; log:\n%s", logs)
			}
			// Built anew: empty, and written and read as before.
			ctx := context.Background()
			if _, err := p.Get(ctx, key(1)); !errors.Is(err, datastore.ErrNotFound) {
				t.Errorf("Get after the rebuild: %v, want not found", err)
			}
			if err := p.Put(ctx, key(1), []byte("x")); err != nil {
				t.Fatal(err)
			}
			if got, err := p.Get(ctx, key(1)); err != nil || string(got) != "x" {
				t.Errorf("Get = %q, %v; want x", got, err)
			}
		})
	}
}

func TestPebble_Intact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "part")
	fill(t, dir, 100)
	log, logs := newLog()
	p, err := derived.OpenPebble(dir, "test store", log)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := readAll(p, 100); err != nil {
		t.Fatal(err)
	}
	if m := aside(t, dir); len(m) != 0 || strings.Contains(logs.String(), "WARN") {
		t.Errorf("an intact database was moved aside (%v); log:\n%s", m, logs)
	}
}

func TestMoveAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search")
	var got []string
	for range 2 {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		to, err := derived.MoveAside(dir)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, to)
	}
	stamp := strings.TrimPrefix(got[0], dir+".corrupt-")
	if _, err := time.Parse(derived.AsideTimeFormat, stamp); err != nil {
		t.Errorf("%s: not <dir>.corrupt-<%s>: %v", got[0], derived.AsideTimeFormat, err)
	}
	if got[0] == got[1] {
		t.Errorf("moved aside twice to %s", got[0])
	}
	if to, err := derived.MoveAside(dir); to != "" || err != nil {
		t.Errorf("MoveAside of nothing = %q, %v; want \"\", nil", to, err)
	}
}

// A database whose directory is removed while the node runs (rm -r
// DATA/blocks) is built anew at the next call, and closing it after the
// removal ends the node cleanly: pebble writes a new log file on close,
// and its logger would end the process where that directory is gone.
func TestPebble_DirRemoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  bool // a call meets the removal before Close
	}{
		{"a call after the removal", true},
		{"closed after the removal", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "part")
			fill(t, dir, 100)
			log, logs := newLog()
			p, err := derived.OpenPebble(dir, "test store", log)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			k := datastore.NewKey("/after")
			if tc.use {
				if err := p.Put(context.Background(), k, []byte("x")); err == nil || !strings.Contains(err.Error(), "was removed while the node ran") {
					t.Errorf("Put after the removal: %v, want the removal said", err)
				}
				p.Settle()
				if err := p.Put(context.Background(), k, []byte("x")); err != nil {
					t.Errorf("Put on the database built anew: %v", err)
				}
				if v, err := p.Get(context.Background(), k); err != nil || string(v) != "x" {
					t.Errorf("Get = %q, %v; want x", v, err)
				}
			}
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			want := "built anew"
			if !tc.use {
				want = "its directory " + dir + " was removed while the node ran; it is built anew at the next start"
			}
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, logs)
			}
			again, err := derived.OpenPebble(dir, "test store", log)
			if err != nil {
				t.Fatalf("open after: %v", err)
			}
			if err := again.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}
