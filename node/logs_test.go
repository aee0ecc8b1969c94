package node

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store/storetest"
)

// logLines are the lines of logs at level or above (level=WARN…).
func logLines(logs *storetest.Buffer, levels ...string) []string {
	var out []string
	for _, line := range strings.Split(logs.String(), "\n") {
		for _, l := range levels {
			if strings.Contains(line, " level="+l+" ") {
				out = append(out, line)
			}
		}
	}
	return out
}

// waitLog waits until logs hold a line with every one of parts (a wait,
// not a timing assertion).
func waitLog(t *testing.T, logs *storetest.Buffer, parts ...string) {
	t.Helper()
	waiting.Until(t, fmt.Sprintf("a line with %q", parts), func() string {
		text := logs.String()
		for _, line := range strings.Split(text, "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return ""
			}
		}
		return "none in:\n" + text
	})
}

// takenUDPPort is a loopback UDP port the test holds until it ends.
func takenUDPPort(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, port, _ := net.SplitHostPort(c.LocalAddr().String())
	return port
}

// closedPort is a loopback TCP port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

// A --bootstrap peer that cannot be dialled is one line, the node's,
// naming the peer, its address and the reason; kad-dht's own "failed to
// bootstrap" for it goes to debug.
func TestLogs_BootstrapDialFailureIsOneLine(t *testing.T) {
	_, pub, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := peer.IDFromPublicKey(pub)
	addr := "/ip4/127.0.0.1/tcp/" + closedPort(t)
	logs := &storetest.Buffer{}
	logNode(t, logs, func(c *Config) { c.P2P.Bootstrap = []string{addr + "/p2p/" + id.String()} })
	waitLog(t, logs, "level=WARN", "cannot reach bootstrap peer")
	waitLog(t, logs, "level=DEBUG", `msg="failed to bootstrap"`, id.String())

	var got []string
	for _, line := range logLines(logs, "INFO", "WARN", "ERROR") {
		if strings.Contains(line, id.String()) {
			got = append(got, line)
		}
	}
	want := `addrs=[` + addr + `] "retry in"=1s err="connection refused"`
	if len(got) != 1 || !strings.Contains(got[0], "peer="+id.String()) || !strings.Contains(got[0], want) {
		t.Errorf("lines naming the peer = %q, want one with peer=%s and %s", got, id, want)
	}
}

// A UDP listen port in use is refused before libp2p starts, with the
// address, the reason and how to choose another, as a TCP one is.
func TestLogs_ListenPortTakenIsOneError(t *testing.T) {
	addr := "/ip4/127.0.0.1/udp/" + takenUDPPort(t) + "/quic-v1"
	logs := &storetest.Buffer{}
	cfg := logConfig(t, logs)
	cfg.P2P.Listen = []string{addr}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = n.Start(context.Background())
	if err == nil {
		n.Close()
		t.Fatalf("the node started on %s, a port in use", addr)
	}
	if want := "p2p: cannot listen on " + addr + " (--listen): address already in use; another node? give this one a port of its own with --listen (env METAMESH_LISTEN; make run LISTEN=…)"; err.Error() != want || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("error = %q, want %q (EADDRINUSE)", err, want)
	}
	if got := logLines(logs, "WARN", "ERROR"); len(got) > 0 {
		t.Errorf("warnings and errors logged besides the error returned: %q", got)
	}
}

// The tests of this file do not run in parallel: go-libp2p logs through
// one process-wide slog handler, which every node's start points at its
// own logger (p2p.RouteLogs).

// When libp2p.New fails, fx's lines about it ("OnStart hook failed",
// "start failed") go to debug: the error libp2p.New returns is the one
// the node tells.
func TestLogs_FxStartFailureIsQuiet(t *testing.T) {
	port := takenUDPPort(t)
	logs := &storetest.Buffer{}
	p2p.RouteLogs(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), slog.LevelDebug)
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/udp/" + port + "/quic-v1"))
	if err == nil {
		h.Close()
		t.Fatal("libp2p.New listened on a UDP port in use")
	}
	waitLog(t, logs, "level=DEBUG", `msg="OnStart hook failed"`, "logger=p2p-config", "system=fx")
	for _, line := range logLines(logs, "INFO", "WARN", "ERROR") {
		if strings.Contains(line, "system=fx") {
			t.Errorf("fx line above debug: %s", line)
		}
	}
}

// logConfig is a node on loopback, with its own redis-server, whose log
// lines go to logs, at debug.
func logConfig(t *testing.T, logs *storetest.Buffer) Config {
	t.Helper()
	return Config{
		Libraries: []string{t.TempDir()}, RedisURL: storetest.Server(t).URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(t),
		P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Settle: 30 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// logNode starts the node of logConfig, changed by edit (when set).
func logNode(t *testing.T, logs *storetest.Buffer, edit func(*Config)) *Node {
	t.Helper()
	cfg := logConfig(t, logs)
	if edit != nil {
		edit(&cfg)
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// An API address written 0.0.0.0 is logged as written, not as the
// listener's [::], with the port the system picked for 0.
func TestLogs_APIAddressAsWritten(t *testing.T) {
	logs := &storetest.Buffer{}
	n := logNode(t, logs, func(c *Config) { c.APIAddr = "0.0.0.0:0" })
	_, port, _ := net.SplitHostPort(n.APIAddr())
	waitLog(t, logs, `msg="node running"`, "api=http://0.0.0.0:"+port+" ")
	waitLog(t, logs, "level=WARN", `msg="api on a non-loopback address`, "addr=0.0.0.0:"+port+" ")
	if strings.Contains(logs.String(), "[::]") {
		t.Errorf("the log names [::]:\n%s", logs)
	}
}

// A federated lookup the HTTP client gave up on is logged at debug as
// abandoned, not as an error of the node's.
func TestLogs_AbandonedLookupIsNotAnError(t *testing.T) {
	logs := &storetest.Buffer{}
	n := logNode(t, logs, nil)
	// A peer that takes the record request and never answers.
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	asked := make(chan struct{})
	var once sync.Once
	h.SetStreamHandler(libp2pproto.ID(protocol.RecordProtocolID), func(s network.Stream) {
		once.Do(func() { close(asked) })
		io.Copy(io.Discard, s) // until the node resets the stream
	})
	if err := n.Connect(waiting.Context(t), peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a file nobody has"))
	c, err := protocol.SHA256CID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(rctx, "GET", "http://"+n.APIAddr()+"/api/meta/"+c.String(), nil)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the lookup ended before the peer was asked: %v", err)
	}
	rcancel()
	<-done
	waitLog(t, logs, "level=DEBUG", `msg="meta lookup abandoned: the client went away"`, "cid="+c.String())
	if got := logLines(logs, "ERROR"); len(got) > 0 {
		t.Errorf("errors logged for a lookup the client abandoned: %q", got)
	}
}
