package node_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store/storetest"
)

// p2pNode starts a node on loopback, on an empty library, with tweak
// applied to its config.
func p2pNode(t testing.TB, tweak func(*node.Config)) *node.Node {
	t.Helper()
	return startNodeWith(t, t.TempDir(), tweak)
}

func connect(a, b *node.Node) error {
	ai, err := peer.AddrInfoFromString(b.P2PAddrs()[0])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.Connect(ctx, *ai)
}

func swarmKey(t *testing.T, seed byte) string {
	t.Helper()
	k := make([]byte, 32)
	for i := range k {
		k[i] = seed + byte(i)
	}
	p := filepath.Join(t.TempDir(), "swarm.key")
	if err := os.WriteFile(p, []byte("/key/swarm/psk/1.0.0/\n/base16/\n"+hex.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A private federation: nodes with the same swarm key connect, a node
// with another key or none cannot, and an explicit QUIC address is
// refused (QUIC cannot run a private network).
func TestP2P_SwarmKey(t *testing.T) {
	t.Parallel()
	key := swarmKey(t, 1)
	a := p2pNode(t, func(c *node.Config) { c.P2P.SwarmKeyFile = key })
	b := p2pNode(t, func(c *node.Config) { c.P2P.SwarmKeyFile = key })
	if err := connect(b, a); err != nil {
		t.Fatalf("same key: %v", err)
	}
	other := p2pNode(t, func(c *node.Config) { c.P2P.SwarmKeyFile = swarmKey(t, 9) })
	if err := connect(other, a); err == nil {
		t.Error("a node with another swarm key connected")
	}
	open := p2pNode(t, nil)
	if err := connect(open, a); err == nil {
		t.Error("a node without the swarm key connected")
	}
	for _, addr := range a.P2PAddrs() {
		if strings.Contains(addr, "quic") {
			t.Errorf("a private node listens on QUIC: %s", addr)
		}
	}
	_, err := node.New(node.Config{Libraries: []string{t.TempDir()}, DataDir: t.TempDir(),
		P2P: p2p.Config{SwarmKeyFile: key, Listen: []string{"/ip4/127.0.0.1/udp/0/quic-v1"}}})
	if err == nil || !strings.Contains(err.Error(), "QUIC") {
		t.Errorf("explicit QUIC with a swarm key: %v, want a refusal naming QUIC", err)
	}
}

// The default listen addresses with a swarm key drop QUIC (and log why)
// instead of refusing to start.
func TestP2P_SwarmKeyDropsDefaultQUIC(t *testing.T) {
	t.Parallel()
	key := swarmKey(t, 3)
	cfg := node.Config{Libraries: []string{t.TempDir()}, DataDir: t.TempDir(), P2P: p2p.Config{SwarmKeyFile: key}}
	if _, err := node.New(cfg); err != nil {
		t.Fatalf("default listen with a swarm key refused: %v", err)
	}
}

// --allow-peer: only listed peers connect, either way.
func TestP2P_AllowPeer(t *testing.T) {
	t.Parallel()
	a := p2pNode(t, nil)
	b := p2pNode(t, nil)
	guarded := p2pNode(t, func(c *node.Config) { c.P2P.AllowPeers = []string{a.PeerID()} })
	if err := connect(a, guarded); err != nil {
		t.Fatalf("allowed peer: %v", err)
	}
	// b's dial may complete its handshake before the guarded node hangs
	// up, so look at who the guarded node keeps.
	_ = connect(b, guarded)
	if err := connect(guarded, b); err == nil {
		t.Error("the guarded node dialled a peer not on its allow-list")
	}
	waiting.Until(t, "the guarded node to keep only "+a.PeerID(), func() string {
		_, ps := get(t, guarded, "GET", "/api/peers")
		ids := []string{}
		for _, p := range ps["peers"].([]any) {
			ids = append(ids, p.(map[string]any)["id"].(string))
		}
		if len(ids) == 1 && ids[0] == a.PeerID() {
			return ""
		}
		return fmt.Sprintf("its peers: %v", ids)
	}, waiting.Every(50*time.Millisecond))
}

// The identity is created once (mode 0600) and kept; a key others may
// read is refused.
func TestLoadIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k1, err := p2p.LoadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := p2p.LoadIdentity(dir)
	if err != nil || !k1.Equals(k2) {
		t.Fatalf("second load: %v, same key %v", err, err == nil && k1.Equals(k2))
	}
	fi, _ := os.Stat(filepath.Join(dir, "identity.key"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("identity.key mode %v, want 0600", fi.Mode().Perm())
	}
	os.Chmod(filepath.Join(dir, "identity.key"), 0o644)
	if _, err := p2p.LoadIdentity(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a readable key: %v", err)
	}
}

// Status shows the peer ID and addresses with /p2p/, and the peers.
func TestP2P_Status(t *testing.T) {
	t.Parallel()
	a := p2pNode(t, nil)
	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	code, st := get(t, a, "GET", "/api/status")
	if code != 200 || st["peerId"] != a.PeerID() || st["peers"].(float64) != 1 {
		t.Fatalf("status: %d %v", code, st)
	}
	addrs, _ := st["addrs"].([]any)
	if len(addrs) == 0 || !strings.HasSuffix(addrs[0].(string), "/p2p/"+a.PeerID()) {
		t.Errorf("addrs = %v", addrs)
	}
	if st["reachability"] != "unknown" || st["relayService"] != false {
		t.Errorf("reachability %v, relayService %v on loopback, want unknown and false", st["reachability"], st["relayService"])
	}
	code, ps := get(t, a, "GET", "/api/peers")
	peers, _ := ps["peers"].([]any)
	if code != 200 || len(peers) != 1 || peers[0].(map[string]any)["id"] != b.PeerID() {
		t.Fatalf("peers: %d %v", code, ps)
	}
	if p := peers[0].(map[string]any); p["connection"] != "direct" || p["transport"] != "tcp" || p["relay"] != nil {
		t.Errorf("a loopback TCP peer = %v, want direct over tcp, no relay", p)
	}
}

// TCP listens with SO_REUSEPORT (hole punching dials from the listen
// port), yet a second node on a running node's port is refused, naming
// the address, instead of sharing the port and taking half its dials.
func TestP2P_SecondNodeOnTheSamePortIsRefused(t *testing.T) {
	t.Parallel()
	a := p2pNode(t, nil)
	addr := strings.Split(a.P2PAddrs()[0], "/p2p/")[0]
	srv := storetest.Server(t)
	n, err := node.New(node.Config{
		Libraries: []string{t.TempDir()}, RedisURL: srv.URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(t),
		P2P: p2p.Config{Listen: []string{addr}}, Logger: storetest.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = n.Start(context.Background())
	if err == nil {
		n.Close()
		t.Fatalf("a second node started on %s, held by a running node", addr)
	}
	if !strings.Contains(err.Error(), "cannot listen on "+addr) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error = %v, want it to name %s in use", err, addr)
	}
}

// relayedTrio starts R, a relay; B on lib, with a reservation at R, which
// tells only its circuit address; and C, which joins B through that
// address and tells one nobody listens on. Hole punching is off on both:
// they are two households behind NAT routers whose punch fails (on
// loopback they could otherwise dial each other directly as soon as they
// learn each other's addresses, and would: the DHT wants a connection
// that is not limited). editR, editB and editC, when not nil, change the
// configurations.
func relayedTrio(t testing.TB, lib string, editR, editB, editC func(*node.Config)) (r, b, c *node.Node) {
	t.Helper()
	r = p2pNode(t, func(cfg *node.Config) {
		cfg.P2P.RelayService = true
		if editR != nil {
			editR(cfg)
		}
	})
	b = startNodeWith(t, lib, func(cfg *node.Config) {
		cfg.P2P.Relays = []string{r.P2PAddrs()[0]}
		cfg.P2P.Announce = []string{r.P2PAddrs()[0] + "/p2p-circuit"}
		cfg.P2P.NoHolePunching = true
		if editB != nil {
			editB(cfg)
		}
	})
	var st api.Status
	waiting.For(t, "B's reservation with R", func() bool {
		getJSON(t, b, "/api/status", &st)
		return len(st.Relays) == 1 && st.Relays[0].Reserved && len(st.Relays[0].Addrs) > 0
	})
	circuit := st.Relays[0].Addrs[0]
	if !strings.HasSuffix(circuit, "/p2p/"+b.PeerID()) {
		circuit += "/p2p/" + b.PeerID()
	}
	c = p2pNode(t, func(cfg *node.Config) {
		cfg.P2P.Bootstrap = []string{circuit}
		cfg.P2P.Announce = []string{"/ip4/127.0.0.1/tcp/9"} // the discard port: nothing listens there
		cfg.P2P.NoHolePunching = true
		if editC != nil {
			editC(cfg)
		}
	})
	return r, b, c
}
