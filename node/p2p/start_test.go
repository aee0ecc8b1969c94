package p2p

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	ma "github.com/multiformats/go-multiaddr"
)

// relayOn is the line Start logs once the host runs with the relay
// service, before the DHT starts.
const relayOn = "relay service on: relaying for others (circuit relay v2)"

// TestStart_Cancelled: a start whose ctx ends, before it began or once
// its host runs, stops with ctx's error and closes what it built: the
// port it listened on is free again.
func TestStart_Cancelled(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before bool // cancelled before Start, else on relayOn
	}{
		{"before the start", true},
		{"once the host runs", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.before {
				cancel()
			}
			log := &cancelOn{Handler: slog.NewTextHandler(t.Output(), nil), msg: relayOn, cancel: cancel, seen: new(atomic.Bool)}
			listen := freeTCP(t)
			p, err := Start(ctx, startConfig(listen), newKey(t), slog.New(log))
			if p != nil {
				p.Close()
			}
			if !errors.Is(err, context.Canceled) || p != nil {
				t.Fatalf("Start: %v, %v; want context.Canceled and no Net", p, err)
			}
			if got, want := log.seen.Load(), !tt.before; got != want {
				t.Errorf("the host ran: %v, want %v", got, want)
			}
			if err := portsFree([]ma.Multiaddr{ma.StringCast(listen)}); err != nil {
				t.Errorf("after the cancelled start: %v; want its port closed", err)
			}
		})
	}
}

// TestStart_Close: Close closes what Start built (its port is free
// again); a second Close closes nothing.
func TestStart_Close(t *testing.T) {
	t.Parallel()
	listen := freeTCP(t)
	p, err := Start(context.Background(), startConfig(listen), newKey(t), slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := portsFree([]ma.Multiaddr{ma.StringCast(listen)}); err != nil {
		t.Errorf("after Close: %v; want the port closed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

// startConfig is a host on listen alone, a DHT server and a relay for
// others (so that Start logs relayOn).
func startConfig(listen string) Config {
	return Config{Listen: []string{listen}, DHTMode: "server", ConnLow: 10, ConnHigh: 20, RelayService: true}
}

// freeTCP is a loopback TCP multiaddr that nothing listens on.
func freeTCP(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)
}

func newKey(t *testing.T) crypto.PrivKey {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cancelOn is a log handler that cancels a start's ctx when it logs msg,
// and says it did (seen).
type cancelOn struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
	seen   *atomic.Bool
}

func (h *cancelOn) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.seen.Store(true)
		h.cancel()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *cancelOn) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.Handler = h.Handler.WithAttrs(as)
	return &c
}

func (h *cancelOn) WithGroup(name string) slog.Handler {
	c := *h
	c.Handler = h.Handler.WithGroup(name)
	return &c
}
