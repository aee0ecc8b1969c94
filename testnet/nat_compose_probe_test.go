package testnet

// Probes of the NAT testnet (testnet/compose/nat.yml) for nat_compose_test.go:
// the layout, typed reads of /api/peers and /api/status, a watcher of
// connection kinds, the host's listener on the internet network (to see
// what a router's NAT makes of a flow) and the relay's byte counter.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The internet network of nat.yml. natHostAddr is its bridge's gateway,
// the test host's own address there.
const (
	natHostAddr   = "192.0.0.129"
	natPublicAddr = "192.0.0.130"
)

// natHousehold is one household of the NAT testnet as the checks see it.
type natHousehold struct {
	household
	router    string // its router's service; "" for public
	lan       string // the router's LAN address
	wan       string // the household's internet address: its router's WAN, or its own
	symmetric bool   // behind MASQUERADE --random-fully
}

func natHouseholds() []*natHousehold {
	return []*natHousehold{
		{household: household{svc: "public"}, wan: natPublicAddr},
		{household: household{svc: "cone1"}, router: "router-cone1", lan: "10.91.1.2", wan: "192.0.0.131"},
		{household: household{svc: "cone2"}, router: "router-cone2", lan: "10.91.2.2", wan: "192.0.0.132"},
		{household: household{svc: "sym"}, router: "router-sym", lan: "10.91.3.2", wan: "192.0.0.133", symmetric: true},
	}
}

// natPeerID generates a service's identity through the image's entrypoint
// (so the key belongs to the node's user, not root) and returns its ID.
func natPeerID(c *composeNet, svc string) string {
	c.t.Helper()
	out := c.must("run", "--rm", "--no-deps", "-T", svc, "id", "--create", "--data", "/data")
	f := strings.Fields(strings.TrimSpace(out))
	if len(f) == 0 || !strings.HasPrefix(f[len(f)-1], "12D3KooW") {
		c.t.Fatalf("%s: metamesh id printed %q", svc, out)
	}
	return f[len(f)-1]
}

// natToken reads the API token a node writes into its /data at start;
// an error until it has.
func natToken(c *composeNet, svc string) (string, error) {
	id, err := c.run("ps", "-q", svc)
	if err != nil || strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("%s: no container: %v", svc, err)
	}
	out, err := exec.Command("docker", "cp", strings.TrimSpace(id)+":/data/api-token", "-").Output()
	if err != nil {
		return "", fmt.Errorf("%s: docker cp api-token: %v", svc, err)
	}
	tr := tar.NewReader(bytes.NewReader(out))
	if _, err := tr.Next(); err != nil {
		return "", err
	}
	b, err := io.ReadAll(tr)
	if tok := strings.TrimSpace(string(b)); err == nil && tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("%s: empty api-token", svc)
}

// dockerExec runs a command (busybox, in the NAT images) in a container.
func dockerExec(id string, args ...string) (string, error) {
	out, err := exec.Command("docker", append([]string{"exec", id}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// getInto GETs base+path and decodes the JSON answer into v.
func getInto(base, path, token string, v any) (int, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}

// natPeer is one entry of GET /api/peers.
type natPeer struct {
	ID         string   `json:"id"`
	Addrs      []string `json:"addrs"`
	Connection string   `json:"connection"`
	Transport  string   `json:"transport"`
	Relay      string   `json:"relay"`
}

// natStatus is the part of GET /api/status the NAT checks read.
type natStatus struct {
	Addrs          []string `json:"addrs"`
	ObservedAddrs  []string `json:"observedAddrs"`
	Reachability   string   `json:"reachability"`
	Basis          string   `json:"reachabilityBasis"`
	ReachableAddrs []string `json:"reachableAddrs"`
	RelayService   bool     `json:"relayService"`
	Relays         []struct {
		ID       string   `json:"id"`
		Reserved bool     `json:"reserved"`
		Expires  string   `json:"expires"`
		Addrs    []string `json:"addrs"`
		Error    string   `json:"error"`
	} `json:"relays"`
}

// natPeersOf is h's GET /api/peers by peer ID.
func natPeersOf(h *natHousehold) (map[string]natPeer, error) {
	var v struct {
		Peers []natPeer `json:"peers"`
	}
	code, err := getInto(h.url, "/api/peers", h.token, &v)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /api/peers: %d", code)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.svc, err)
	}
	m := map[string]natPeer{}
	for _, p := range v.Peers {
		m[p.ID] = p
	}
	return m, nil
}

func natStatusOf(h *natHousehold) (natStatus, error) {
	var st natStatus
	code, err := getInto(h.url, "/api/status", h.token, &st)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /api/status: %d", code)
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", h.svc, err)
	}
	return st, nil
}

// connWatch polls /api/peers of some households and remembers, for every
// (household, peer), when it first saw each kind of connection and which
// kind it saw last. Until a household's /api/status has listed an address
// at its internet address (its router's WAN), it polls that too: a NATed
// node lists its observed address only until AutoNAT v2 finds it
// unreachable, seconds after the start.
type connWatch struct {
	start    time.Time // the `up` the figures count from
	mu       sync.Mutex
	first    map[[2]string]map[string]time.Time
	last     map[[2]string]string
	observed map[string]string // peer → the first address seen at its internet address
	stop     chan struct{}
	done     chan struct{}
}

func watchConns(t *testing.T, start time.Time, every time.Duration, hs ...*natHousehold) *connWatch {
	w := &connWatch{start: start, first: map[[2]string]map[string]time.Time{}, last: map[[2]string]string{},
		observed: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for _, h := range hs {
				w.poll(h)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.close)
	return w
}

func (w *connWatch) poll(h *natHousehold) {
	w.mu.Lock()
	_, seen := w.observed[h.peer]
	w.mu.Unlock()
	if st, err := natStatusOf(h); !seen && err == nil {
		for _, a := range st.ObservedAddrs {
			if strings.HasPrefix(a, "/ip4/"+h.wan+"/") {
				w.mu.Lock()
				w.observed[h.peer] = a
				w.mu.Unlock()
				break
			}
		}
	}
	peers, err := natPeersOf(h)
	if err != nil {
		return // a household down or restarting
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, p := range peers {
		k := [2]string{h.peer, id}
		if w.first[k] == nil {
			w.first[k] = map[string]time.Time{}
		}
		if _, ok := w.first[k][p.Connection]; !ok {
			w.first[k][p.Connection] = now
		}
		w.last[k] = p.Connection
	}
}

func (w *connWatch) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// firstSeen is when either of a and b first saw the other with a
// connection of kind conn (zero: never).
func (w *connWatch) firstSeen(a, b, conn string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	for _, k := range [][2]string{{a, b}, {b, a}} {
		if t, ok := w.first[k][conn]; ok && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at
}

// observedAddr is the address at its router's WAN h listed among its
// observed addresses (/api/status observedAddrs), if it did.
func (w *connWatch) observedAddr(h *natHousehold) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.observed[h.peer]
}

// lastSeen is the kinds a saw b with and b saw a with, last.
func (w *connWatch) lastSeen(a, b string) (string, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[[2]string{a, b}], w.last[[2]string{b, a}]
}

// natMapping listens on the host's internet address and reports the source
// address each connection arrives from: what a router's NAT made of a flow.
type natMapping struct {
	lns []net.Listener
	mu  sync.Mutex
	got map[int][]string // listener port → remote addresses, in order
}

func listenMapping(t *testing.T, n int) *natMapping {
	t.Helper()
	m := &natMapping{got: map[int][]string{}}
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp4", net.JoinHostPort(natHostAddr, "0"))
		if err != nil {
			t.Fatalf("listen on the host's internet address %s (the test runs on the Docker host): %v", natHostAddr, err)
		}
		m.lns = append(m.lns, l)
		port := l.Addr().(*net.TCPAddr).Port
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				m.mu.Lock()
				m.got[port] = append(m.got[port], conn.RemoteAddr().String())
				m.mu.Unlock()
				conn.Close()
			}
		}()
	}
	t.Cleanup(func() {
		for _, l := range m.lns {
			l.Close()
		}
	})
	return m
}

// probe runs natprobe in the container: one connection to every listener
// in turn from local port lport. It returns the source address each
// listener saw.
func (m *natMapping) probe(t *testing.T, container string, lport int) []string {
	t.Helper()
	args := []string{"natprobe", "-from", strconv.Itoa(lport)}
	before := map[int]int{}
	m.mu.Lock()
	for _, l := range m.lns {
		port := l.Addr().(*net.TCPAddr).Port
		before[port] = len(m.got[port])
		args = append(args, net.JoinHostPort(natHostAddr, strconv.Itoa(port)))
	}
	m.mu.Unlock()
	if out, err := dockerExec(container, args...); err != nil {
		t.Fatalf("%s: %v %s", strings.Join(args, " "), err, out)
	}
	var out []string
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.lns {
		port := l.Addr().(*net.TCPAddr).Port
		if got := m.got[port]; len(got) > before[port] {
			out = append(out, got[before[port]])
		} else {
			t.Fatalf("the listener on %s:%d saw no connection from natprobe", natHostAddr, port)
		}
	}
	return out
}

// scrape reads h's /metrics into series → value, a series named as the
// exposition format writes it (`name` or `name{label="value",…}`).
func scrape(h *natHousehold) (map[string]float64, error) {
	resp, err := httpc.Get(h.url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// relayBytes is what the public node's relay service has carried:
// libp2p_relaysvc_data_transferred_bytes_total from its /metrics, or,
// where that series is missing, the bytes through its network interfaces
// (/proc/net/dev, read with docker exec; every protocol, not only relayed
// streams, and counted in and out).
func relayBytes(h *natHousehold, container string) (float64, string, error) {
	const series = "libp2p_relaysvc_data_transferred_bytes_total"
	m, err := scrape(h)
	if err != nil {
		return 0, "", err
	}
	if v, ok := m[series]; ok {
		return v, series, nil
	}
	out, err := dockerExec(container, "cat", "/proc/net/dev")
	if err != nil {
		return 0, "", fmt.Errorf("/proc/net/dev: %v %s", err, out)
	}
	var sum float64
	for _, line := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || strings.TrimSpace(name) == "lo" || len(f) < 9 {
			continue
		}
		rx, _ := strconv.ParseFloat(f[0], 64)
		tx, _ := strconv.ParseFloat(f[8], 64)
		sum += rx + tx
	}
	return sum, "interface bytes in+out (/proc/net/dev)", nil
}

// holePunches is what h's metamesh_holepunch_total says, "success N,
// failure M", or why it cannot say.
func holePunches(h *natHousehold) string {
	m, err := scrape(h)
	if err != nil {
		return err.Error()
	}
	ok, okFound := m[`metamesh_holepunch_total{result="success"}`]
	fail, failFound := m[`metamesh_holepunch_total{result="failure"}`]
	if !okFound && !failFound {
		return "no metamesh_holepunch_total"
	}
	return fmt.Sprintf("success %.0f, failure %.0f", ok, fail)
}

// median of a few figures.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64{}, v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// reachWatch polls /api/status of every household and remembers when
// each first showed the reachability it should (want), and every other
// verdict than unknown it showed on the way (a wrong one).
type reachWatch struct {
	mu    sync.Mutex
	at    map[string]time.Time // household → first time at want
	basis map[string]string    // household → what that verdict rested on
	wrong []string
	stop  chan struct{}
	done  chan struct{}
}

func watchReach(t *testing.T, want map[*natHousehold]string) *reachWatch {
	w := &reachWatch{at: map[string]time.Time{}, basis: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			for h, st := range want {
				s, err := natStatusOf(h)
				if err != nil {
					continue // down or restarting
				}
				w.mu.Lock()
				switch {
				case s.Reachability == st:
					if _, ok := w.at[h.svc]; !ok {
						w.at[h.svc], w.basis[h.svc] = time.Now(), s.Basis
					}
				case s.Reachability != "unknown":
					w.wrong = append(w.wrong, fmt.Sprintf("%s %s (%s)", h.svc, s.Reachability, s.Basis))
				}
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.close)
	return w
}

func (w *reachWatch) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}
