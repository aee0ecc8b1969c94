package testnet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// Cluster is n full nodes on loopback, each with its own redis-server,
// data directory and library, in the style of hashicorp/raft's
// MakeCluster: Connect, Partition/Heal, Kill/Restart keeping data,
// AddFile, WaitFor; logs go to t.Log and everything is cleaned up.
type Cluster struct {
	t     testing.TB
	Nodes []*Member
	opts  Options
	cut   *partition
}

// Member is one node of a cluster.
type Member struct {
	Index   int
	Node    *node.Node
	Library string
	Data    string
	PeerID  string
	Addr    string // the libp2p TCP address with /p2p/<id>, stable over restarts

	c      *Cluster
	redis  *store.Server
	listen string
}

// Options tune a cluster.
type Options struct {
	// ReprovideInterval and ProviderRecordTTL are shortened by tests of the
	// reprovide machinery. Defaults: the node's.
	ReprovideInterval time.Duration
	ProviderRecordTTL time.Duration
	// LookupTimeout of every node; default 5s.
	LookupTimeout time.Duration
	// PeerRootsMax of every node; default the node's.
	PeerRootsMax int
	// PeerRecordTTL of every node; default the node's.
	PeerRecordTTL time.Duration
	// Reporter, when set, is called at every start of member i and what
	// it returns counts that node's libp2p stream bytes
	// (node.Config.P2P.BandwidthReporter). Benchmarks set it.
	Reporter func(i int) metrics.Reporter
	// NAT are the members behind a NAT: they accept no direct connection
	// (only relayed ones), but dial out to anyone, as behind a home
	// router. Hole punching needs public addresses, which loopback has
	// not, so their connections with each other stay relayed.
	NAT []int
	// Configure, when set, adjusts member i's configuration before each
	// start (the members before it are running).
	Configure func(c *Cluster, i int, cfg *node.Config)
}

// New starts n nodes, not connected to each other (see Connect, Chain).
func New(t testing.TB, n int, opts ...Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, cut: &partition{group: map[peer.ID]int{}, nat: map[peer.ID]bool{}}}
	if len(opts) > 0 {
		c.opts = opts[0]
	}
	if c.opts.LookupTimeout == 0 {
		c.opts.LookupTimeout = 5 * time.Second
	}
	for i := 0; i < n; i++ {
		lib, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		m := &Member{Index: i, Library: lib, Data: storetest.Dir(t), c: c, listen: "/ip4/127.0.0.1/tcp/0"}
		c.Nodes = append(c.Nodes, m)
		m.start(nil)
	}
	t.Cleanup(c.Close)
	return c
}

// Join starts one more node, bootstrapped from the members named (by
// index), and returns it: a federation that grows one household at a
// time. Files written into its library first (AddFile with its index,
// len(c.Nodes) before the call) are there at its start.
func (c *Cluster) Join(bootstrap ...int) *Member {
	c.t.Helper()
	m := c.Prepare()
	var boot []string
	for _, j := range bootstrap {
		boot = append(boot, c.Nodes[j].Addr)
	}
	m.start(boot)
	return m
}

// Prepare adds a member that is not started yet (its library and data
// directory exist, for AddFile), unless the last one added is still
// waiting for its start; Join starts it.
func (c *Cluster) Prepare() *Member {
	c.t.Helper()
	if n := len(c.Nodes); n > 0 && c.Nodes[n-1].Node == nil && c.Nodes[n-1].PeerID == "" {
		return c.Nodes[n-1]
	}
	lib, err := filepath.EvalSymlinks(c.t.TempDir())
	if err != nil {
		c.t.Fatal(err)
	}
	m := &Member{Index: len(c.Nodes), Library: lib, Data: storetest.Dir(c.t), c: c, listen: "/ip4/127.0.0.1/tcp/0"}
	c.Nodes = append(c.Nodes, m)
	// Stopped before its directories go (cleanups run last first).
	c.t.Cleanup(func() { c.Kill(m.Index) })
	return m
}

// Chain starts nothing: it connects node i to node i+1 only, so a lookup
// from one end must travel through the DHT.
func (c *Cluster) Chain() {
	for i := 0; i+1 < len(c.Nodes); i++ {
		c.Connect(i, i+1)
	}
}

// Connect dials node j from node i.
func (c *Cluster) Connect(i, j int) {
	c.t.Helper()
	ai, err := peer.AddrInfoFromString(c.Nodes[j].Addr)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Nodes[i].Node.Connect(ctx, *ai); err != nil {
		c.t.Fatalf("connect node %d to %d: %v", i, j, err)
	}
}

// Partition cuts the cluster into groups (node indexes): nodes in
// different groups drop their connections and refuse new ones until Heal.
// Nodes in no group form a group of their own.
func (c *Cluster) Partition(groups ...[]int) {
	c.cut.mu.Lock()
	c.cut.group = map[peer.ID]int{}
	for g, members := range groups {
		for _, i := range members {
			c.cut.group[peer.ID(c.Nodes[i].PeerID)] = g + 1
		}
	}
	c.cut.mu.Unlock()
	for _, m := range c.Nodes {
		if m.Node == nil {
			continue
		}
		for _, o := range c.Nodes {
			if o != m && !c.cut.allowed(peer.ID(m.PeerID), peer.ID(o.PeerID)) {
				m.Node.Disconnect(peer.ID(o.PeerID))
			}
		}
	}
}

// Heal lifts every partition. Nodes find each other again through their
// connections' redials (bootstrap peers) or Connect.
func (c *Cluster) Heal() {
	c.cut.mu.Lock()
	c.cut.group = map[peer.ID]int{}
	c.cut.mu.Unlock()
}

// Kill stops node i and its redis-server, keeping its data.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	m := c.Nodes[i]
	if m.Node != nil {
		if err := m.Node.Close(); err != nil {
			c.t.Logf("node %d close: %v", i, err)
		}
		m.Node = nil
	}
	if m.redis != nil {
		_ = m.redis.Close()
		m.redis = nil
	}
}

// Restart starts node i again on its data, identity and address.
func (c *Cluster) Restart(i int, bootstrap ...int) {
	c.t.Helper()
	var boot []string
	for _, j := range bootstrap {
		boot = append(boot, c.Nodes[j].Addr)
	}
	c.Nodes[i].start(boot)
}

// AddFile writes a file into node i's library and returns its path.
func (c *Cluster) AddFile(i int, name string, data []byte) string {
	c.t.Helper()
	p := filepath.Join(c.Nodes[i].Library, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// WaitFor polls cond through waiting.For until it holds, failing the
// test after timeout (a guard against a hang, not a timing assertion:
// never less than waiting.Guard, so a loaded machine does not fail a
// test that would pass).
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	waiting.For(c.t, what, cond, waiting.Limit(timeout), waiting.Every(50*time.Millisecond))
}

// Close stops every node.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		c.Kill(i)
	}
}

// Get asks node i's HTTP API and decodes the JSON answer.
func (m *Member) Get(path string) (int, map[string]any) {
	m.c.t.Helper()
	resp, err := http.Get("http://" + m.Node.APIAddr() + path)
	if err != nil {
		m.c.t.Fatalf("node %d GET %s: %v", m.Index, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		m.c.t.Fatalf("node %d GET %s: not JSON: %q", m.Index, path, raw)
	}
	return resp.StatusCode, out
}

// Idle waits until node i has ingested its library.
func (m *Member) Idle() {
	m.c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Node.Ingester().WaitIdle(ctx); err != nil {
		m.c.t.Fatalf("node %d never went idle: %v", m.Index, err)
	}
}

func (m *Member) start(bootstrap []string) {
	t := m.c.t
	t.Helper()
	srv, err := store.StartServer(context.Background(), store.ServerConfig{Dir: filepath.Join(m.Data, "r"), Logger: m.logger("redis")})
	if err != nil {
		t.Fatalf("node %d: %v", m.Index, err)
	}
	m.redis = srv
	// The node's identity is known before it starts (the gater needs it).
	key, err := p2p.LoadIdentity(m.Data)
	if err != nil {
		t.Fatalf("node %d: %v", m.Index, err)
	}
	self, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatalf("node %d: %v", m.Index, err)
	}
	m.PeerID = self.String()
	o := m.c.opts
	var bw metrics.Reporter
	if o.Reporter != nil {
		bw = o.Reporter(m.Index)
	}
	if slices.Contains(o.NAT, m.Index) {
		m.c.cut.mu.Lock()
		m.c.cut.nat[self] = true
		m.c.cut.mu.Unlock()
	}
	cfg := node.Config{
		Libraries: []string{m.Library}, DataDir: m.Data, RedisURL: srv.URL(), APIAddr: "127.0.0.1:0",
		Settle: 50 * time.Millisecond, ReprovideInterval: o.ReprovideInterval,
		LookupTimeout: o.LookupTimeout, PeerRootsMax: o.PeerRootsMax, PeerRecordTTL: o.PeerRecordTTL,
		P2P: p2p.Config{Listen: []string{m.listen}, Bootstrap: bootstrap, ProviderRecordTTL: o.ProviderRecordTTL,
			BandwidthReporter: bw, Gater: &memberGater{p: m.c.cut, self: self}},
		Logger: m.logger("node"),
	}
	if o.Configure != nil {
		o.Configure(m.c, m.Index, &cfg)
	}
	n, err := node.New(cfg)
	if err != nil {
		t.Fatalf("node %d: %v", m.Index, err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatalf("node %d: start: %v", m.Index, err)
	}
	m.Node = n
	for _, a := range n.P2PAddrs() {
		if strings.Contains(a, "/tcp/") {
			m.Addr = a
			m.listen = strings.Split(a, "/p2p/")[0] // the same port after a restart
			break
		}
	}
}

func (m *Member) logger(component string) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t: m.c.t, prefix: fmt.Sprintf("node%d ", m.Index)}, &slog.HandlerOptions{Level: slog.LevelInfo})).
		With("c", component)
}

// testWriter sends log lines to t.Log.
type testWriter struct {
	t      testing.TB
	prefix string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(w.prefix + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// partition is the cluster's cut: peers in different groups may not
// connect.
type partition struct {
	mu    sync.Mutex
	group map[peer.ID]int
	// nat are the peers behind a NAT (Options.NAT).
	nat map[peer.ID]bool
}

// natHides reports whether a dial of peer p at a cannot get through:
// p is behind a NAT and a is not through a relay (the NAT drops the SYN).
func (p *partition) natHides(id peer.ID, a ma.Multiaddr) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.nat[id] {
		return false
	}
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err != nil
}

// natRefuses reports whether self, behind a NAT, refuses a connection:
// an inbound one that does not come through a relay.
func (p *partition) natRefuses(self peer.ID, dir network.Direction, addrs network.ConnMultiaddrs) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.nat[self] || dir != network.DirInbound {
		return false
	}
	_, err := addrs.RemoteMultiaddr().ValueForProtocol(ma.P_CIRCUIT)
	return err != nil
}

func (p *partition) allowed(a, b peer.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.group) == 0 {
		return true
	}
	return p.group[a] == p.group[b]
}

// memberGater applies the partition to one node.
type memberGater struct {
	p    *partition
	self peer.ID
}

func (g *memberGater) InterceptPeerDial(p peer.ID) bool { return g.p.allowed(g.self, p) }
func (g *memberGater) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	return g.p.allowed(g.self, p) && !g.p.natHides(p, a)
}
func (g *memberGater) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g *memberGater) InterceptSecured(dir network.Direction, p peer.ID, addrs network.ConnMultiaddrs) bool {
	return g.p.allowed(g.self, p) && !g.p.natRefuses(g.self, dir, addrs)
}
func (g *memberGater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}
