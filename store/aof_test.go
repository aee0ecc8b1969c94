package store_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// aofFiles are the append-only files of a managed server's dir (Redis 7:
// appendonlydir), by kind: "base" and "incr".
func aofFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kind := range []string{"base", "incr"} {
		m, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "appendonly.aof.*."+kind+".*"))
		if len(m) != 1 {
			t.Skipf("not Redis 7's appendonlydir (%s files: %v)", kind, m)
		}
		out[kind] = m[0]
	}
	return out
}

// A damaged append-only file stops the start with the one command that
// repairs it, and is left where it is; that command repairs it.
func TestStartServer_DamagedAOF(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, files map[string]string)
		fixed  bool // redis-check-aof --fix makes it start again
	}{
		{"a command garbled", func(t *testing.T, files map[string]string) {
			b, _ := os.ReadFile(files["incr"])
			i := bytes.Index(b[len(b)/2:], []byte("*")) + len(b)/2
			copy(b[i:], "#!")
			os.WriteFile(files["incr"], b, 0o600)
		}, true},
		{"the base file truncated", func(t *testing.T, files map[string]string) {
			if err := os.Truncate(files["base"], 20); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := storetest.Dir(t)
			srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
			s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
			for i := range 20 {
				ingest(t, s, stat("/f"+string(rune('a'+i)), int64(i+1)), content{i + 1, i + 1})
			}
			s.Close()
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			files := aofFiles(t, dir)
			tc.damage(t, files)
			before := map[string][]byte{}
			for _, f := range files {
				before[f], _ = os.ReadFile(f)
			}

			_, err := store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)})
			var aof *store.AOFDamagedError
			if !errors.As(err, &aof) {
				t.Fatalf("start = %v, want an AOFDamagedError", err)
			}
			manifest := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
			want := "run redis-check-aof --fix " + manifest + ","
			if got := err.Error(); !strings.HasPrefix(got, "the store's append-only file is damaged (redis-server: ") ||
				!strings.Contains(got, want) || strings.Contains(got, "\n") {
				t.Errorf("error = %q, want one line with %q", got, want)
			}
			for f, b := range before {
				if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, b) {
					t.Errorf("%s was changed or removed (%v)", f, err)
				}
			}
			if !tc.fixed {
				return
			}
			if _, err := exec.LookPath("redis-check-aof"); err != nil {
				t.Skip("redis-check-aof is not installed: the repair is not tried")
			}
			cmd := exec.Command("sh", "-c", aof.Command())
			cmd.Stdin = strings.NewReader("y\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", aof.Command(), err, out)
			}
			srv = must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
			defer srv.Close()
			s = must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
			defer s.Close()
			if n := must[int64](t)(s.Roots(ctx)); n == 0 {
				t.Errorf("after the repair: no root left")
			}
		})
	}
}

// A tail cut short (a crash mid-write) is loaded without it: the start
// goes on, and what came before is there.
func TestStartServer_AOFTailCutShort(t *testing.T) {
	dir := storetest.Dir(t)
	srv := must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	s := must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	a := ingest(t, s, stat("/a", 1), content{1, 1})
	ingest(t, s, stat("/b", 2), content{2, 2})
	s.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	incr := aofFiles(t, dir)["incr"]
	fi, err := os.Stat(incr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(incr, fi.Size()-7); err != nil {
		t.Fatal(err)
	}
	srv = must[*store.Server](t)(store.StartServer(ctx, store.ServerConfig{Dir: dir, Logger: storetest.Logger(t)}))
	defer srv.Close()
	s = must[*store.Store](t)(store.Open(ctx, store.Options{URL: srv.URL()}))
	defer s.Close()
	if got := must[store.RootID](t)(s.GetByCID(ctx, content{1, 1}.hashes().IPFS)); got != a.Root {
		t.Errorf("after the cut: GetByCID = %s, want %s", got, a.Root)
	}
}
