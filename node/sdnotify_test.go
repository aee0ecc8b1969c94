package node_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store/storetest"
)

// A node run under a service manager (systemd's Type=notify) tells it
// READY=1 once it serves and STOPPING=1 when it begins to stop, on the
// socket NOTIFY_SOCKET names: here a unixgram socket the test reads, by
// path and in the abstract namespace ("@…").
func TestRun_NotifiesTheServiceManager(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "sd") // a unix socket path is short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, tc := range []struct{ name, socket, listen string }{
		{"path", filepath.Join(dir, "notify"), filepath.Join(dir, "notify")},
		{"abstract", "@metamesh-test-" + filepath.Base(dir), "\x00metamesh-test-" + filepath.Base(dir)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: tc.listen, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			msgs := make(chan string, 8)
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						close(msgs)
						return
					}
					msgs <- string(buf[:n])
				}
			}()

			cfg := node.Config{
				Libraries: []string{t.TempDir()}, RedisURL: storetest.Server(t).URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(t),
				P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Settle: 30 * time.Millisecond,
				Logger: slog.New(slog.DiscardHandler), NotifySocket: tc.socket,
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- node.Run(ctx, cfg) }()

			ready, _ := waiting.Recv(t, msgs, "READY=1")
			if !hasAssignment(ready, "READY=1") || !strings.Contains(ready, "STATUS=serving the API on 127.0.0.1:") {
				t.Errorf("first message %q, want READY=1 and a STATUS naming the API address", ready)
			}
			cancel()
			stopping, _ := waiting.Recv(t, msgs, "STOPPING=1")
			if !hasAssignment(stopping, "STOPPING=1") {
				t.Errorf("second message %q, want STOPPING=1", stopping)
			}
			if err, _ := waiting.Recv(t, done, "Run to return"); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
}

// hasAssignment says whether the notify message msg (newline-separated
// assignments) holds a.
func hasAssignment(msg, a string) bool {
	for l := range strings.SplitSeq(msg, "\n") {
		if l == a {
			return true
		}
	}
	return false
}
