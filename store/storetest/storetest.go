package storetest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/store"
)

// Dir returns a new, short temporary directory removed by tb.Cleanup. A
// managed redis-server puts its unix socket in its directory, and a socket
// path must fit in store.MaxSocketPath bytes, which the paths of
// tb.TempDir (named after the test) can exceed.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "mm")
	if err != nil {
		tb.Fatalf("temp dir: %v", err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Server starts a redis-server for tb and returns it. A missing
// redis-server fails the test: the suite never silently skips.
func Server(tb testing.TB) *store.Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		tb.Fatalf("redis-server is not installed (sudo apt-get install redis-server): %v", err)
	}
	srv, err := store.StartServer(context.Background(), store.ServerConfig{Dir: Dir(tb), Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

// New starts a redis-server and opens a Store on it.
func New(tb testing.TB) *store.Store {
	tb.Helper()
	srv := Server(tb)
	s, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Logger discards logs (tests assert on behaviour, not log lines).
func Logger(testing.TB) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Buffer is a strings.Builder that a logger or a running process may write
// while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// PathFields are the values of a local path's state in the order the path
// index keeps them (store/lua/common.lua: PF); a store test checks they
// agree.
var PathFields = []string{"root", "size", "mtime", "mid", "hashed", "dev", "ino", "link", "xv"}

// setPathField rewrites the member of ARGV[1] in the path index with its
// value number ARGV[2] set to ARGV[3]; 0 when the path is not known.
const setPathField = `
local p, k, v = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local m = redis.call('ZRANGEBYLEX', 'path:__index__', '[' .. p .. '\0', '(' .. p .. '\1', 'LIMIT', 0, 1)[1]
if not m then return 0 end
local vals, i = {}, #p + 2
while true do
  local j = string.find(m, ' ', i, true)
  if not j then vals[#vals + 1] = string.sub(m, i); break end
  vals[#vals + 1] = string.sub(m, i, j - 1)
  i = j + 1
end
vals[k] = v
redis.call('ZREM', 'path:__index__', m)
redis.call('ZADD', 'path:__index__', 0, p .. '\0' .. table.concat(vals, ' '))
return 1`

// SetPathField changes one value (a name of PathFields) of known local
// path's state in the path index of the Redis rdb talks to, as an older
// release or a fault would leave it: a test's way to stage what the
// store's own operations never write.
func SetPathField(tb testing.TB, rdb *redis.Client, path, field, value string) {
	tb.Helper()
	k := slices.Index(PathFields, field) + 1
	if k == 0 {
		tb.Fatalf("storetest: no path field %q", field)
	}
	n, err := rdb.Eval(context.Background(), setPathField, nil, path, k, value).Int()
	if err != nil || n != 1 {
		tb.Fatalf("storetest: set %s of path %q: %d, %v", field, path, n, err)
	}
}
