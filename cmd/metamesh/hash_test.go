package main

import (
	"fmt"
	"github.com/metamesh/node/internal/waiting"

	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execute runs the command line in-process under ctx.
func execute(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var o, e bytes.Buffer
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return o.String(), e.String(), err
}

// sparseFile makes a file of size bytes that takes no disk space: long
// enough to hash that only a cancellation ends the pass in a test's time.
func sparseFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "long.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHash_NotRegular: FIFOs, devices and sockets are refused at once,
// without being opened (opening a FIFO with no writer blocks).
func TestHash_NotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
	}{
		{"fifo", fifo},
		{"symlink to a fifo", link},
		{"unix socket", sock},
		{"character device", os.DevNull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := waiting.Context(t)
			cmd := exec.CommandContext(ctx, binary, "hash", tt.path)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("hash %s still running after %v", tt.path, took)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1", err)
			}
			if got, want := e.String(), tt.path+": not a regular file"; !strings.Contains(got, want) {
				t.Errorf("stderr %q, want it to contain %q", got, want)
			}
			if o.Len() != 0 {
				t.Errorf("stdout %q, want nothing", o.String())
			}
		})
	}
}

// TestHash_Interrupt: SIGINT or SIGTERM in the middle of a long hash pass
// stops the binary promptly, saying why.
func TestHash_Interrupt(t *testing.T) {
	long := sparseFile(t, 64<<30)
	tests := []struct {
		name string
		sig  syscall.Signal
		want string
	}{
		{"SIGINT", syscall.SIGINT, "interrupt signal received"},
		{"SIGTERM", syscall.SIGTERM, "terminated signal received"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, "hash", long)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitReading(t, cmd.Process.Pid, 16<<20)
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 {
					t.Errorf("exit: %v, want status 1", err)
				}
			case <-waiting.After():
				cmd.Process.Kill()
				<-done
				t.Fatalf("still hashing %v after %v", waiting.Guard, tt.sig)
			}
			if got := e.String(); !strings.Contains(got, tt.want) || !strings.Contains(got, long) {
				t.Errorf("stderr %q, want it to name %s and say %q", got, long, tt.want)
			}
			if o.Len() != 0 {
				t.Errorf("stdout %q, want nothing", o.String())
			}
		})
	}
}

// waitReading waits until process pid has read at least n bytes, so the
// signal handlers are installed and the hash pass is under way.
func waitReading(t *testing.T, pid int, n int64) {
	t.Helper()
	// Looked at every 5 ms, so the signal comes early in the pass.
	waiting.For(t, fmt.Sprintf("process %d to read %d bytes", pid, n), func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "rchar: "); ok {
				if got, _ := strconv.ParseInt(v, 10, 64); got >= n {
					return true
				}
			}
		}
		return false
	}, waiting.Every(5*time.Millisecond))
}

// TestHash_Cancel: the command stops when its context is cancelled, before
// or during the hash pass.
func TestHash_Cancel(t *testing.T) {
	long := sparseFile(t, 64<<30)
	tests := []struct {
		name  string
		after time.Duration
	}{
		{"already cancelled", 0},
		{"cancelled mid-pass", 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.after == 0 {
				cancel()
			} else {
				time.AfterFunc(tt.after, cancel)
			}
			done := make(chan error, 1)
			var out string
			go func() {
				var err error
				out, _, err = execute(t, ctx, "hash", long, long)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
			case <-waiting.After():
				t.Fatalf("still hashing %v after the cancel", waiting.Guard)
			}
		})
	}
}

// TestHash_NonUTF8Name: a file name that is not valid UTF-8 comes back
// exactly in pathBytes; path keeps a readable form.
func TestHash_NonUTF8Name(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name          string
		file          string
		wantPath      string // relative to dir
		wantPathBytes bool
	}{
		{"byte 0xff", "a\xffb.bin", "a\uFFFDb.bin", true},
		{"truncated sequence", "caf\xc3.bin", "caf\uFFFD.bin", true},
		{"valid UTF-8", "café 日本.bin", "café 日本.bin", false},
		{"ascii", "plain.bin", "plain.bin", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.file)
			if err := os.WriteFile(p, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := metamesh(t, nil, "hash", p)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got struct {
				Path      string  `json:"path"`
				PathBytes *string `json:"pathBytes"`
				Size      int64   `json:"size"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if want := filepath.Join(dir, tt.wantPath); got.Path != want {
				t.Errorf("path = %q, want %q", got.Path, want)
			}
			if got.Size != int64(len(tt.file)) {
				t.Errorf("size = %d, want %d", got.Size, len(tt.file))
			}
			switch {
			case !tt.wantPathBytes && got.PathBytes != nil:
				t.Errorf("pathBytes = %q for a name JSON carries exactly", *got.PathBytes)
			case tt.wantPathBytes && got.PathBytes == nil:
				t.Errorf("no pathBytes in %s", out)
			case tt.wantPathBytes:
				raw, err := base64.StdEncoding.DecodeString(*got.PathBytes)
				if err != nil {
					t.Fatalf("pathBytes %q: %v", *got.PathBytes, err)
				}
				if string(raw) != p {
					t.Errorf("pathBytes decodes to %q, want %q", raw, p)
				}
				if _, err := os.Stat(string(raw)); err != nil {
					t.Errorf("the decoded name does not open: %v", err)
				}
			}
		})
	}
}

// TestHash_Directory: a directory is walked as the node walks a library,
// one line per file in byte order; FIFOs and sockets in it are left out
// without being opened.
func TestHash_Directory(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	write := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "b.mkv"), "bee")
	write(filepath.Join(dir, "a", "c.srt"), "sea")
	write(filepath.Join(dir, ".hidden"), "no")
	write(filepath.Join(dir, "d.mkv.part"), "no")
	write(filepath.Join(other, "outside.mkv"), "linked")
	write(filepath.Join(other, "sub", "deep.mkv"), "not descended")
	if err := os.Symlink(filepath.Join(other, "outside.mkv"), filepath.Join(dir, "link.mkv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "sub"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, e, err := execute(t, context.Background(), "hash", dir)
	if err != nil {
		t.Fatalf("hash %s: %v (%s)", dir, err, e)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(o), "\n") {
		var m struct {
			Path string `json:"path"`
			Size int64  `json:"size"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, strings.TrimPrefix(m.Path, dir+"/"))
	}
	if want := []string{"a/c.srt", "b.mkv", "link.mkv"}; !slices.Equal(got, want) {
		t.Errorf("hashed %q, want %q", got, want)
	}
}
