package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// startRun starts `metamesh run` on an empty library with args added,
// and stops it when the test ends.
func startRun(t *testing.T, data, api string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"run", "--library", t.TempDir(), "--data", data, "--api", api,
		"--settle", "100ms", "--log-level", "warn"}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
}

// nodeID is the peer ID of a fresh data directory, known before it runs.
func nodeID(t *testing.T, data string) string {
	t.Helper()
	out, errOut, code := metamesh(t, nil, "id", "--create", "--data", data)
	if code != 0 {
		t.Fatalf("metamesh id: %d %s", code, errOut)
	}
	return strings.TrimSpace(out)
}

// TestRun_PeersAndStatus: three `metamesh run` processes on loopback, B
// joining A over TCP and C over QUIC. On A, `metamesh peers` shows each
// as a direct connection with its transport, latency and address in
// the header's columns, and --json passes the node's fields through;
// `metamesh status` on every node shows the reachability, the reachable
// addresses, the relays and the relay service as its JSON has them.
func TestRun_PeersAndStatus(t *testing.T) {
	t.Parallel()
	type proc struct{ data, api, id string }
	procs := map[string]*proc{}
	for _, name := range []string{"A", "B", "C"} {
		p := &proc{data: storetest.Dir(t), api: freeAddr(t)}
		p.id = nodeID(t, p.data)
		procs[name] = p
	}
	a, b, c := procs["A"], procs["B"], procs["C"]
	aTCP := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
	aQUIC := fmt.Sprintf("/ip4/127.0.0.1/udp/%d/quic-v1", freeUDPPort(t))
	start := func(p *proc, args ...string) { t.Helper(); startRun(t, p.data, p.api, args...) }
	start(a, "--listen", aTCP, "--listen", aQUIC)
	start(b, "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)), "--bootstrap", aTCP+"/p2p/"+a.id)
	start(c, "--listen", fmt.Sprintf("/ip4/127.0.0.1/udp/%d/quic-v1", freeUDPPort(t)), "--bootstrap", aQUIC+"/p2p/"+a.id)

	// A's peers, once both are connected and pinged.
	var peers []api.Peer
	waiting.Until(t, "A to list B and C with a latency", func() string {
		out, _, code := metamesh(t, nil, "peers", "--json", "--api", a.api)
		var res struct {
			Peers []api.Peer `json:"peers"`
		}
		if code == 0 && json.Unmarshal([]byte(out), &res) == nil {
			peers = res.Peers
			i := slices.IndexFunc(peers, func(p api.Peer) bool { return p.ID == b.id })
			j := slices.IndexFunc(peers, func(p api.Peer) bool { return p.ID == c.id })
			if i >= 0 && j >= 0 && peers[i].LatencyMs > 0 && peers[j].LatencyMs > 0 {
				return ""
			}
		}
		return fmt.Sprintf("last exit %d: %s", code, out)
	}, cliPoll)
	want := map[string]struct{ transport, addr string }{
		b.id: {"tcp", `/ip4/127\.0\.0\.1/tcp/\d+`},
		c.id: {"quic-v1", `/ip4/127\.0\.0\.1/udp/\d+/quic-v1`},
	}
	for _, p := range peers {
		w, ok := want[p.ID]
		if !ok {
			continue
		}
		if p.Connection != "direct" || p.Transport != w.transport || p.Relay != "" {
			t.Errorf("peers --json, %s: connection %q, transport %q, relay %q; want direct, %s, no relay", p.ID, p.Connection, p.Transport, p.Relay, w.transport)
		}
	}
	out, errOut, code := metamesh(t, nil, "peers", "--api", a.api)
	if code != 0 {
		t.Fatalf("peers: exit %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !regexp.MustCompile(`^PEER +CONNECTION +TRANSPORT +LATENCY +ADDRESSES$`).MatchString(lines[0]) {
		t.Fatalf("peers: no header line:\n%s", out)
	}
	header := []string{"PEER", "CONNECTION", "TRANSPORT", "LATENCY", "ADDRESSES"}
	head := columns(lines[0], header...)
	// A peer shows as its household's name (the host name by default) and
	// the end of its ID once A heard it, else as its abbreviated ID: as
	// the JSON's name says.
	names := map[string]string{}
	for _, p := range peers {
		names[p.ID] = p.Name
	}
	for id, w := range want {
		label := peerLabel(id, names[id])
		re := regexp.MustCompile(`^` + regexp.QuoteMeta(label) + ` +direct +` + regexp.QuoteMeta(w.transport) + ` +[0-9.]+ ms +` + w.addr + `( |$)`)
		i := slices.IndexFunc(lines, re.MatchString)
		if i < 0 {
			t.Errorf("peers: no line for %s, %q (direct, %s, a latency, its address):\n%s", id, label, w.transport, out)
			continue
		}
		f := strings.Fields(strings.TrimPrefix(lines[i], label))
		cells := []string{label, f[0], f[1], f[2] + " " + f[3], f[4]}
		if got := columns(lines[i], cells...); !slices.Equal(got, head) {
			t.Errorf("peers: %s's cells at columns %v, the header's at %v:\n%s", id, got, head, out)
		}
	}

	// status, on every node, shows what its JSON says.
	for name, p := range procs {
		out, errOut, code := metamesh(t, nil, "status", "--api", p.api)
		jsonOut, _, jcode := metamesh(t, nil, "status", "--json", "--api", p.api)
		var st api.Status
		if code != 0 || jcode != 0 || json.Unmarshal([]byte(jsonOut), &st) != nil {
			t.Fatalf("status of %s: exit %d/%d %s\n%s", name, code, jcode, errOut, jsonOut)
		}
		if !slices.Contains([]string{"public", "private", "unknown"}, st.Reachability) {
			t.Errorf("status --json of %s: reachability %q, want public, private or unknown", name, st.Reachability)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		has := func(line string) {
			t.Helper()
			if !slices.Contains(lines, line) {
				t.Errorf("status of %s lacks the line %q:\n%s", name, line, out)
			}
		}
		const col = len("relay service ") // the longest name and a space
		at := func(n, v string) string { return n + strings.Repeat(" ", col-len(n)) + v }
		has(at("peer ID", p.id))
		has(at("reachability", st.Reachability))
		for _, r := range st.ReachableAddrs {
			has(at("reachable", r))
		}
		if len(st.ReachableAddrs) == 0 {
			has(at("reachable", "none confirmed"))
		}
		for _, r := range st.Relays {
			state := "not reserved"
			if r.Reserved {
				state = "reserved until " + r.Expires
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, at("relay", r.ID+" "+state)) }) {
				t.Errorf("status of %s: no line for relay %s (%s):\n%s", name, r.ID, state, out)
			}
			for _, a := range r.Addrs {
				has(at("relay circuit", a))
			}
		}
		if len(st.Relays) == 0 {
			has(at("relay", "none"))
		}
		if st.RelayService {
			has(at("relay service", "on (relays for other peers)"))
		} else {
			has(at("relay service", "off"))
		}
	}
}

// waitOutput runs metamesh with args until its output has a line that
// matches every pattern (each may match another line), and returns it.
func waitOutput(t *testing.T, what string, patterns []string, args ...string) string {
	t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(p)
	}
	var out string
	waiting.Until(t, fmt.Sprintf("%s: output with lines matching %q", what, patterns), func() string {
		var errOut string
		var code int
		out, errOut, code = metamesh(t, nil, args...)
		lines := strings.Split(out, "\n")
		ok := code == 0
		for _, re := range res {
			ok = ok && slices.ContainsFunc(lines, re.MatchString)
		}
		if ok {
			return ""
		}
		return fmt.Sprintf("last exit %d, %s:\n%s", code, errOut, out)
	}, cliPoll)
	return out
}

// TestRun_RelayedPeerAndReservation: R runs the relay service, B keeps a
// reservation with it (--relay), and C reaches B only through R (its
// bootstrap address is B's circuit address; no hole punching). C's
// `metamesh peers` shows B relayed via R over TCP at the circuit
// address; B's `metamesh status` shows the reservation with its expiry
// and circuit address; R's shows the relay service on.
func TestRun_RelayedPeerAndReservation(t *testing.T) {
	t.Parallel()
	type proc struct{ data, api, id, p2p string }
	var r, b, c proc
	for _, p := range []*proc{&r, &b, &c} {
		p.data, p.api = storetest.Dir(t), freeAddr(t)
		p.id = nodeID(t, p.data)
		p.p2p = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
	}
	relayAddr := r.p2p + "/p2p/" + r.id
	startRun(t, r.data, r.api, "--listen", r.p2p, "--relay-service")
	// Ready is listening: B's first dial finds it.
	waiting.For(t, "the relay to become ready", func() bool {
		_, _, code := metamesh(t, nil, "health", "--api", r.api)
		return code == 0
	}, cliPoll)
	// B stands for a household behind NAT: a DHT client (no peer's DHT
	// walk dials it), reachable through its relay only.
	startRun(t, b.data, b.api, "--listen", b.p2p, "--relay", relayAddr, "--hole-punching=false", "--dht-mode", "client")

	id := regexp.QuoteMeta
	circuit := relayAddr + "/p2p-circuit"
	bStatus := waitOutput(t, "B's reservation", []string{
		`^relay         ` + id(r.id) + ` reserved until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`,
		`^relay circuit ` + id(circuit) + `(/p2p/` + id(b.id) + `)?$`,
		`^reachability  (public|private|unknown)$`,
		`^relay service off$`,
	}, "status", "--api", b.api)
	var st api.Status
	out, _, code := metamesh(t, nil, "status", "--json", "--api", b.api)
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Relays) != 1 || st.Relays[0].ID != r.id {
		t.Errorf("B's status --json: exit %d, want one relay %s:\n%s", code, r.id, out)
	} else if exp, err := time.Parse(time.RFC3339, st.Relays[0].Expires); err != nil || time.Until(exp) <= 0 || !strings.Contains(bStatus, " reserved until "+st.Relays[0].Expires+"\n") {
		t.Errorf("B's reservation expires %q (%v); want a time to come, as the readable status says:\n%s", st.Relays[0].Expires, err, bStatus)
	}
	waitOutput(t, "R's relay service", []string{`^relay service on \(relays for other peers\)$`, `^relay         none$`}, "status", "--api", r.api)

	startRun(t, c.data, c.api, "--listen", c.p2p, "--bootstrap", circuit+"/p2p/"+b.id, "--hole-punching=false")
	out = waitOutput(t, "C's relayed peer B", []string{
		`^PEER +CONNECTION +TRANSPORT +LATENCY +ADDRESSES$`,
		`^` + peerCellRE(b.id) + ` +relayed via ` + id(r.id[:8]+"…"+r.id[len(r.id)-6:]) + ` +tcp +(-|[0-9.]+ ms) +` + id(circuit) + `( |$)`,
		`^` + peerCellRE(r.id) + ` +direct +tcp +(-|[0-9.]+ ms) +` + id(r.p2p) + `( |$)`,
	}, "peers", "--api", c.api)
	lines := strings.Split(out, "\n")
	head := columns(lines[0], "PEER", "CONNECTION", "TRANSPORT", "LATENCY", "ADDRESSES")
	bLine := regexp.MustCompile(`^` + peerCellRE(b.id) + ` +relayed`)
	i := slices.IndexFunc(lines, bLine.MatchString)
	bCell := regexp.MustCompile(`^` + peerCellRE(b.id)).FindString(lines[i])
	if got := columns(lines[i], bCell, "relayed via", "tcp", "/ip4/"); !slices.Equal(got, []int{head[0], head[1], head[2], head[4]}) {
		t.Errorf("C's relayed line at columns %v, the header's %v:\n%s", got, head, out)
	}
}
