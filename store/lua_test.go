package store

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// luaFiles lists the embedded files of lua/.
func luaFiles(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(luaFS, "lua/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no embedded Lua files")
	}
	for i, n := range names {
		names[i] = path.Base(n)
	}
	return names
}

func isPrelude(name string) bool {
	return name == luaCommonFile || name == luaPreludeFile
}

// TestLuaScriptsLoad compiles every embedded file in a real redis-server
// (SCRIPT LOAD), composed as its script variable composes it, so a Lua
// syntax error fails the suite. A file no variable uses yet is composed
// as a write script.
func TestLuaScriptsLoad(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (sudo apt-get install redis-server): %v", err)
	}
	// A short directory: the unix socket's path must fit MaxSocketPath.
	dir, err := os.MkdirTemp("", "mm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := StartServer(ctx, ServerConfig{Dir: dir, Logger: log})
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	s, err := Open(ctx, Options{URL: srv.URL(), Logger: log})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })

	for _, name := range luaFiles(t) {
		var src string
		switch uses := luaUses[name]; {
		case isPrelude(name):
			src = luaFile(name)
		case len(uses) > 0:
			src = luaSource(uses[0], name)
		default:
			src = luaSource(luaWrite, name)
		}
		if err := s.rdb.ScriptLoad(ctx, src).Err(); err != nil {
			t.Errorf("SCRIPT LOAD %s: %v", name, err)
		}
	}
}

// TestLuaFilesUsedOnce: every file of lua/ is a prelude or the script of
// exactly one Go script variable, and begins with what its ARGV and reply
// are.
func TestLuaFilesUsedOnce(t *testing.T) {
	files := map[string]bool{}
	for _, name := range luaFiles(t) {
		files[name] = true
		uses := len(luaUses[name])
		switch {
		case isPrelude(name) && uses > 0:
			t.Errorf("%s is a prelude but %d script variables are made of it", name, uses)
		case !isPrelude(name) && uses != 1:
			t.Errorf("%s is used by %d script variables, want 1", name, uses)
		}
		if isPrelude(name) {
			continue
		}
		var head strings.Builder
		for _, line := range strings.Split(luaFile(name), "\n") {
			if !strings.HasPrefix(line, "--") {
				break
			}
			head.WriteString(line + "\n")
		}
		if h := head.String(); !strings.HasPrefix(h, "-- "+name) || !strings.Contains(h, "ARGV") || !strings.Contains(h, "Reply") {
			t.Errorf("%s does not begin with a comment naming it and documenting its ARGV and Reply", name)
		}
	}
	for name := range luaUses {
		if !files[name] {
			t.Errorf("a script variable is made of %s, which lua/ lacks", name)
		}
	}
}
