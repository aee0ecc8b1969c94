package kubotest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the Kubo release the project interoperates with and
// measures itself against (scripts/kubo.sh builds it).
const Version = "0.42"

// EnvBinary names the environment variable that gives the Kubo binary.
const EnvBinary = "METAMESH_KUBO"

// ErrNotFound: no Kubo 0.42 was found where Find looks, and
// METAMESH_KUBO was not set. Tests skip on it.
var ErrNotFound = errors.New("kubotest: no Kubo " + Version + " ipfs binary")

// howTo is the one line that says how to get Kubo.
const howTo = "run scripts/kubo.sh (builds Kubo " + Version + " into .cache/kubo/ipfs, a few minutes, once), or set " + EnvBinary + " to a Kubo " + Version + " ipfs binary"

// Find returns the path of the Kubo 0.42 ipfs binary, the one way the
// project finds it:
//
//  1. $METAMESH_KUBO, when set and not empty. It must be Kubo 0.42: any
//     other answer (a missing file, another program, another release) is
//     an error that is not ErrNotFound, because asking for Kubo
//     explicitly and not getting it must not pass unnoticed as a skip.
//  2. <module root>/.cache/kubo/ipfs (what scripts/kubo.sh builds),
//  3. ipfs on PATH,
//
// 2 and 3 only when `ipfs version --number` says 0.42. When none fits
// the error wraps ErrNotFound and says how to get Kubo. The version
// check runs once per binary in a process.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("kubotest: %s=%s: %w", EnvBinary, p, err)
		}
		if err := check(abs); err != nil {
			return "", fmt.Errorf("kubotest: %s=%s is not a Kubo %s ipfs binary (%v): point it at one, or unset it to use .cache/kubo/ipfs (scripts/kubo.sh builds it)", EnvBinary, p, Version, err)
		}
		return abs, nil
	}
	var tried []string
	if root, err := moduleRoot(); err == nil {
		p := filepath.Join(root, ".cache", "kubo", "ipfs")
		if _, err := os.Stat(p); err == nil {
			if err := check(p); err != nil {
				tried = append(tried, fmt.Sprintf("%s: %v", p, err))
			} else {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath("ipfs"); err == nil {
		if err := check(p); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
		} else {
			return p, nil
		}
	}
	if len(tried) > 0 {
		return "", fmt.Errorf("%w (%s): %s", ErrNotFound, strings.Join(tried, "; "), howTo)
	}
	return "", fmt.Errorf("%w: %s", ErrNotFound, howTo)
}

// Binary returns the Kubo binary Find finds. Without one it skips the
// test with one line saying how to get it; with METAMESH_KUBO set to
// something that is not Kubo 0.42 it fails the test.
func Binary(tb testing.TB) string {
	tb.Helper()
	p, err := Find()
	switch {
	case errors.Is(err, ErrNotFound):
		tb.Skip(err)
	case err != nil:
		tb.Fatal(err)
	}
	return p
}

var checked sync.Map // path → *versionCheck

type versionCheck struct {
	once sync.Once
	err  error
}

// check runs `path version --number` once per path and process, and
// says why the binary is not Kubo 0.42.
func check(path string) error {
	v, _ := checked.LoadOrStore(path, &versionCheck{})
	vc := v.(*versionCheck)
	vc.once.Do(func() {
		if _, err := os.Stat(path); err != nil {
			vc.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, "version", "--number")
		cmd.Env = environ(os.TempDir())
		out, err := cmd.Output()
		got := strings.TrimSpace(string(out))
		switch {
		case err != nil:
			vc.err = fmt.Errorf("%s version --number: %w", path, err)
		case got == "":
			vc.err = errors.New("its version --number printed nothing: not Kubo")
		case !strings.HasPrefix(got, Version+"."):
			vc.err = fmt.Errorf("is Kubo %q, want %s", got, Version)
		}
	})
	return vc.err
}

// moduleRoot is the directory of this module's go.mod: the nearest one
// above the working directory (go test runs in the package's folder),
// else the one above this source file.
func moduleRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isModule(string(b)) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("kubotest: not inside the module github.com/metamesh/node")
}

func isModule(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if strings.TrimSpace(line) == "module github.com/metamesh/node" {
			return true
		}
	}
	return false
}
