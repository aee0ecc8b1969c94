package testnet

// The NAT testnet (testnet/compose/nat.yml) checked against real
// containers: households behind home routers (two cone NATs, one
// symmetric) that reach each other through the public household's circuit
// relay and, where the NATs allow, hole-punch to direct connections.
// `make testnet-test` runs it with the other compose scenarios
// (METAMESH_TESTNET_COMPOSE=1); without it, it is skipped. The probes it
// uses are in nat_compose_probe_test.go.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
)

// natRun is one run of the NAT testnet: the project, its households, the
// connection watcher and the figures printed at the end.
type natRun struct {
	c                      *composeNet
	hs                     []*natHousehold
	pub, cone1, cone2, sym *natHousehold
	watch                  *connWatch
	reach                  *reachWatch
	start                  time.Time // `up -d`
	figs                   []string
	// reject: the routers answer unsolicited packets (a TCP RST, an ICMP
	// port unreachable) instead of dropping them.
	reject bool
}

// figure logs one figure now and keeps it for the summary.
func (r *natRun) figure(t *testing.T, format string, args ...any) {
	t.Helper()
	s := fmt.Sprintf(format, args...)
	t.Logf("FIGURE %s", s)
	r.figs = append(r.figs, s)
}

// TestComposeNAT brings the NAT testnet up, checks the routers, then the
// scenarios of docs/testnet.md "The NAT testnet", printing the figures it
// reports: once with routers that drop unsolicited packets, once with
// routers that answer them (NAT_UNSOLICITED=reject). The two run one after
// the other (the subnets are fixed).
func TestComposeNAT(t *testing.T) {
	t.Parallel()
	composeGate(t)
	for _, unsolicited := range []string{"drop", "reject"} {
		t.Run("unsolicited="+unsolicited, func(t *testing.T) { runComposeNAT(t, unsolicited == "reject") })
	}
}

func runComposeNAT(t *testing.T, reject bool) {
	r := &natRun{c: newComposeNet(t, projectName("nat"), "testnet/compose/nat.yml"), hs: natHouseholds(), reject: reject}
	r.pub, r.cone1, r.cone2, r.sym = r.hs[0], r.hs[1], r.hs[2], r.hs[3]
	libs, err := os.MkdirTemp("", "metamesh-nat-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(libs) })
	if out, err := exec.Command("./compose/libs.sh", libs, "nat").CombinedOutput(); err != nil {
		t.Fatalf("libs.sh: %v: %s", err, out)
	}
	_ = os.Chmod(libs, 0o755)
	// Debug logs: besides the resolver's line for a failed lookup, the
	// API's line for every request names the CID; and a failed run
	// leaves fuller logs (natSaveLogs).
	unsolicited := "drop"
	if reject {
		unsolicited = "reject"
	}
	r.c.env = []string{"LIBS=" + libs, "NAT_LOG_LEVEL=debug", "NAT_UNSOLICITED=" + unsolicited}
	for _, h := range r.hs {
		r.c.env = append(r.c.env, fmt.Sprintf("%s_PORT=%d", strings.ToUpper(h.svc), freePort(t)))
	}
	t.Cleanup(r.c.down)
	defer onInterrupt(r.c)()
	for _, h := range r.hs {
		h.peer, h.lib = natPeerID(r.c, h.svc), filepath.Join(libs, h.svc)
	}
	r.c.env = append(r.c.env, "PUBLIC_PEER="+r.pub.peer)
	defer func() {
		for _, f := range r.figs {
			t.Logf("SUMMARY %s", f)
		}
	}()

	r.up(t)
	t.Run("Topology", r.topology)
	t.Run("ConeDirect", r.coneDirect)
	t.Run("SymRelayed", r.symRelayed)
	t.Run("RelayDown", r.relayDown)
	t.Run("RestartNATed", r.restartNATed)
	t.Run("Reachability", r.reachability)
}

// reachability: AutoNAT v2 found cone1 private (its log line says so)
// while the run went on. An AutoNAT client asks any one server at most
// every 2 minutes and needs two answers that agree: cone1 has two servers
// once its hole punch with cone2 succeeded (the public household and
// cone2), sym only the public one, so sym's verdict may take longer than
// the run, and restarts start it over; it is reported, not required.
func (r *natRun) reachability(t *testing.T) {
	// Every household shows the right reachability within a minute of
	// up -d (the relay public, the NATed ones private), and never a
	// wrong one on the way.
	r.reach.mu.Lock()
	for _, h := range r.hs {
		want := "private"
		if h == r.pub {
			want = "public"
		}
		at, ok := r.reach.at[h.svc]
		switch {
		case !ok:
			t.Errorf("%s never showed %s", h.svc, want)
		case at.Sub(r.start) > time.Minute:
			t.Errorf("%s showed %s only %.1f s after up -d, want within 60 s", h.svc, want, at.Sub(r.start).Seconds())
		default:
			r.figure(t, "%s %s %.1f s after up -d, because %s", h.svc, want, at.Sub(r.start).Seconds(), r.reach.basis[h.svc])
		}
	}
	if len(r.reach.wrong) > 0 {
		t.Errorf("wrong reachability shown: %v", r.reach.wrong[:min(len(r.reach.wrong), 5)])
	}
	r.reach.mu.Unlock()
	for _, h := range []*natHousehold{r.cone1, r.sym} {
		at := natPrivateAt(r.c, h)
		switch {
		case !at.IsZero():
			r.figure(t, "%s found private by AutoNAT v2 %.1f s after up -d", h.svc, at.Sub(r.start).Seconds())
		case h == r.cone1:
			t.Errorf("cone1 never logged that AutoNAT v2 found it private")
		default:
			r.figure(t, "%s not yet found private by AutoNAT v2 %.0f s after up -d (one AutoNAT server)", h.svc, time.Since(r.start).Seconds())
		}
	}
	// Seen at its router's outside address, sym knows it is behind a NAT
	// without AutoNAT's verdict: it left the DHT's servers.
	if natLogLine(r.c, r.sym, `msg="dht mode follows reachability"`, "mode=client") == "" {
		t.Errorf("sym, behind a symmetric NAT, never became a DHT client")
	}
}

// natLogLine is the first line of h's log (each line led by Docker's
// timestamp) that holds every one of parts, or "".
func natLogLine(c *composeNet, h *natHousehold, parts ...string) string {
	id, err := c.run("ps", "-q", h.svc)
	if err != nil {
		return ""
	}
	out, _ := exec.Command("docker", "logs", "--timestamps", strings.TrimSpace(id)).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// natPrivateAt is when h's log first said its reachability changed to
// private (zero: never).
func natPrivateAt(c *composeNet, h *natHousehold) time.Time {
	l := natLogLine(c, h, `msg="reachability changed"`, "to=private")
	if l == "" {
		return time.Time{}
	}
	at, _ := time.Parse(time.RFC3339Nano, strings.Fields(l)[0])
	return at
}

// up starts the project, waits until every node is healthy, starts the
// connection watcher and measures the first record that crosses two NATs
// (asked for from `up` on).
func (r *natRun) up(t *testing.T) {
	r.start = time.Now()
	r.c.must("up", "-d")
	t.Cleanup(func() { natSaveLogs(t, r.c) }) // before down: cleanups run last first
	for _, h := range r.hs {
		h.url = r.c.apiURL(h.svc)
	}
	files := natFiles(t, r.cone2.lib)
	crossing := make(chan string, 1)
	go func() { crossing <- firstResolve(r.start, r.cone1, r.cone2, files, 3*time.Minute) }()
	// The watcher starts as soon as the nodes have written their tokens,
	// before they report healthy: a NATed node lists its observed address
	// only for its first seconds.
	for _, h := range r.hs {
		waiting.Until(t, h.svc+" writes its API token", func() string {
			tok, err := natToken(r.c, h.svc)
			if err != nil {
				return err.Error()
			}
			h.token = tok
			return ""
		}, sweep)
	}
	r.watch = watchConns(t, r.start, 200*time.Millisecond, r.cone1, r.cone2, r.sym)
	r.reach = watchReach(t, map[*natHousehold]string{r.pub: "public", r.cone1: "private", r.cone2: "private", r.sym: "private"})
	r.c.waitHealthy(3*time.Minute, "public", "cone1", "cone2", "sym")
	r.figure(t, "up -d to all four households healthy: %.1f s", time.Since(r.start).Seconds())
	if res := <-crossing; strings.HasPrefix(res, "after ") {
		r.figure(t, "up -d to the first record across two NATs (cone1 resolves a file of cone2's): %s", strings.TrimPrefix(res, "after "))
	} else {
		t.Errorf("cone1 never resolved a file of cone2's: %s", res)
	}
}

// coneDirect: the two cone-NAT households resolve and search each other,
// and their connection becomes direct.
func (r *natRun) coneDirect(t *testing.T) {
	cone1, cone2 := r.cone1, r.cone2
	natResolveAll(t, cone1, cone2, natFiles(t, cone2.lib))
	natResolveAll(t, cone2, cone1, natFiles(t, cone1.lib))
	natSearch(t, cone1, "Lantern", cone2)
	natSearch(t, cone2, "Kestrel", cone1)
	waiting.Until(t, "cone1's connection to cone2 is direct", func() string {
		peers, err := natPeersOf(cone1)
		if err != nil {
			return err.Error()
		}
		if p := peers[cone2.peer]; p.Connection != "direct" {
			return fmt.Sprintf("cone2 in cone1's peers: %+v", p)
		}
		return ""
	}, sweep)
	// The households bootstrap over TCP and then reach the public one
	// over QUIC too, so they know their outside addresses on both: behind
	// routers that refuse an unsolicited SYN only QUIC can punch.
	if peers, err := natPeersOf(cone1); err != nil {
		t.Error(err)
	} else if p := peers[cone2.peer]; r.reject && !strings.HasPrefix(p.Transport, "quic") {
		t.Errorf("cone1's direct connection to cone2 is over %q, want a QUIC hole punch behind rejecting routers", p.Transport)
	} else {
		r.figure(t, "cone1–cone2 went direct over %s", p.Transport)
	}
	// Bytes over the punched connection: cone1 plays a file of cone2's
	// (which shares its files) through its own /api/file.
	natFetch(t, cone1, natFiles(t, cone2.lib)[0], 200)
	relayed, direct := r.watch.firstSeen(cone1.peer, cone2.peer, "relayed"), r.watch.firstSeen(cone1.peer, cone2.peer, "direct")
	if relayed.IsZero() || relayed.After(direct) {
		r.figure(t, "first relayed to first direct connection, cone1–cone2: never seen relayed (polled every 0.2 s); direct %.1f s after up -d", direct.Sub(r.start).Seconds())
	} else {
		r.figure(t, "first relayed to first direct connection, cone1–cone2: %.1f s (relayed %.1f s, direct %.1f s after up -d; polled every 0.2 s)",
			direct.Sub(relayed).Seconds(), relayed.Sub(r.start).Seconds(), direct.Sub(r.start).Seconds())
	}
}

// symRelayed: the symmetric-NAT household is resolved and searched through
// the relay and never goes direct; the bytes the relay carries per lookup,
// the pairs that end direct and the hole punches are figures.
func (r *natRun) symRelayed(t *testing.T) {
	pub, cone1, cone2, sym := r.pub, r.cone1, r.cone2, r.sym
	symFiles := natFiles(t, sym.lib)
	for _, h := range []*natHousehold{cone1, cone2, pub} {
		natResolveAll(t, h, sym, symFiles)
		natSearch(t, h, "Sable", sym)
	}
	for _, h := range []*natHousehold{cone1, cone2} {
		peers, err := natPeersOf(h)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := peers[sym.peer]; !ok || p.Connection != "relayed" || p.Relay != pub.peer {
			t.Errorf("%s's connection to sym: %+v, want relayed through public %s", h.svc, p, pub.peer)
		}
	}
	// sym shares its files, but reached only through the relay it cannot
	// send them: cone1 says so.
	natFetch(t, cone1, symFiles[0], 503)
	// Bytes through the relay for one lookup each of files nobody has
	// asked for yet, over the relayed connection cone1 holds.
	var per []float64
	var source string
	for k := 0; k < 3; k++ {
		p := filepath.Join(sym.lib, "Probe", fmt.Sprintf("Relay Probe %d.mkv", k))
		writeRandom(t, p, 300000)
		f := hashFile(t, p)
		waiting.Until(t, "sym ingests "+filepath.Base(p), func() string { return checkMeta(&sym.household, f.Canonical+"?local=1", f, nil) }, sweep)
		before, src, err := relayBytes(pub, r.c.container("public"))
		if err != nil {
			t.Fatal(err)
		}
		waiting.Until(t, "cone1 resolves "+filepath.Base(p), func() string {
			return checkMeta(&cone1.household, f.Canonical, f, []string{sym.peer})
		}, sweep)
		after, _, err := relayBytes(pub, r.c.container("public"))
		if err != nil {
			t.Fatal(err)
		}
		per, source = append(per, after-before), src
	}
	r.figure(t, "bytes through the relay per lookup (cone1 → sym, one record each, %s): median %.0f (%v)", source, median(per), per)

	// Pairs that end direct; sym's pairs must never have been.
	pairs := [][2]*natHousehold{{cone1, cone2}, {cone1, sym}, {cone2, sym}}
	direct, report := 0, []string{}
	for _, p := range pairs {
		a, b := r.watch.lastSeen(p[0].peer, p[1].peer)
		kind := "relayed"
		if a == "direct" || b == "direct" {
			kind, direct = "direct", direct+1
		} else if a == "" && b == "" {
			kind = "not connected"
		}
		report = append(report, fmt.Sprintf("%s–%s %s", p[0].svc, p[1].svc, kind))
		if p[1] == sym && !r.watch.firstSeen(p[0].peer, sym.peer, "direct").IsZero() {
			t.Errorf("%s–sym was seen direct: a symmetric NAT should leave it relayed", p[0].svc)
		}
	}
	r.figure(t, "NATed household pairs that end direct: %d/%d (%s); goal cone1–cone2 direct, sym's pairs relayed", direct, len(pairs), strings.Join(report, ", "))
	var punches []string
	for _, h := range []*natHousehold{cone1, cone2, sym} {
		punches = append(punches, h.svc+" "+holePunches(h))
	}
	r.figure(t, "hole punches so far (metamesh_holepunch_total): %s", strings.Join(punches, "; "))
}

// restartNATed: cone2's node restarted renews its reservation, and a file
// added afterwards resolves from cone1.
func (r *natRun) restartNATed(t *testing.T) {
	cone1, cone2 := r.cone1, r.cone2
	if out, err := exec.Command("docker", "restart", "-t", "5", r.c.container("cone2")).CombinedOutput(); err != nil {
		t.Fatalf("docker restart cone2: %v %s", err, out)
	}
	restarted := time.Now()
	r.c.waitHealthy(2*time.Minute, "cone2")
	waiting.Until(t, "cone2 holds a reservation with public again", func() string {
		st, err := natStatusOf(cone2)
		if err != nil {
			return err.Error()
		}
		for _, rl := range st.Relays {
			if rl.ID == r.pub.peer && rl.Reserved {
				return ""
			}
		}
		return fmt.Sprintf("relays %+v", st.Relays)
	}, sweep)
	r.figure(t, "cone2 restarted: reservation renewed %.1f s after docker restart returned", time.Since(restarted).Seconds())
	p := filepath.Join(cone2.lib, "Movies", "After The Restart (2024).mkv")
	writeRandom(t, p, 300000)
	f := hashFile(t, p)
	waiting.Until(t, "cone2 ingests the new file", func() string { return checkMeta(&cone2.household, f.Canonical+"?local=1", f, nil) }, sweep)
	ingested := time.Now()
	waiting.Until(t, "cone2 announces the new file", func() string {
		_, m, err := getJSON(cone2.url, "/api/status", cone2.token)
		if err != nil || m["provideQueue"] != float64(0) {
			return fmt.Sprintf("provideQueue %v %v", m["provideQueue"], err)
		}
		return ""
	}, sweep)
	announced := time.Now()
	natResolveAll(t, cone1, cone2, []fileCIDs{f})
	r.figure(t, "cone2 restarted: a file added after the restart announced %.1f s after cone2 ingested it, resolved from cone1 (every CID) %.1f s after that",
		announced.Sub(ingested).Seconds(), time.Since(announced).Seconds())
}

// topology checks the routers: a NATed node's way out is its router, the
// public node sees each NATed household at its router's WAN address (port
// kept by a cone NAT, not by the symmetric one) and each node learns that
// address as its own, a cone NAT maps one local port to one public port for
// every destination and the symmetric one does not, and nothing
// unsolicited gets in.
func (r *natRun) topology(t *testing.T) {
	c, hs, watch := r.c, r.hs, r.watch
	pub, pubID := r.pub, c.container("public")
	for _, h := range hs[1:] {
		for _, dst := range []string{natPublicAddr, natHostAddr} {
			out, err := dockerExec(c.container(h.svc), "ip", "route", "get", dst)
			if err != nil || !strings.Contains(out, "via "+h.lan+" ") {
				t.Errorf("%s: ip route get %s: %q %v, want via its router %s", h.svc, dst, out, err, h.lan)
			}
		}
	}
	waiting.Until(t, "public sees each NATed household at its router's WAN address", func() string {
		peers, err := natPeersOf(pub)
		if err != nil {
			return err.Error()
		}
		for _, h := range hs[1:] {
			p, ok := peers[h.peer]
			if !ok {
				return h.svc + " is not connected to public"
			}
			// Over TCP, or over QUIC once the node moved its connection
			// to its named peer there (docs/reachability.md).
			port := ""
			for _, a := range p.Addrs {
				if rest, ok := strings.CutPrefix(a, "/ip4/"+h.wan+"/tcp/"); ok {
					port = rest
				}
				if rest, ok := strings.CutPrefix(a, "/ip4/"+h.wan+"/udp/"); ok {
					port, _, _ = strings.Cut(rest, "/")
				}
			}
			switch {
			case port == "":
				return fmt.Sprintf("public sees %s at %v, not at its router's WAN %s", h.svc, p.Addrs, h.wan)
			case !h.symmetric && port != "4681":
				return fmt.Sprintf("public sees %s at %s:%s: the cone NAT did not keep port 4681", h.svc, h.wan, port)
			case h.symmetric && port == "4681":
				return fmt.Sprintf("public sees %s at %s:4681: the symmetric NAT kept the port", h.svc, h.wan)
			}
		}
		return ""
	}, sweep)
	// Each node learns its router's WAN address from the relay (a peer it
	// named, believed at once): listed in /api/status observedAddrs, but
	// never advertised (addrs) unless AutoNAT v2 confirms it dialable, so
	// no peer dials into the NAT before a hole punch. Behind the cone
	// NATs AutoNAT finds it undialable: the node is private.
	waiting.Until(t, "each NATed node observes its router's WAN address", func() string {
		for _, h := range hs[1:] {
			if watch.observedAddr(h) == "" {
				return fmt.Sprintf("%s never listed an address at %s in /api/status observedAddrs", h.svc, h.wan)
			}
		}
		return ""
	}, sweep)
	for _, h := range hs[1:] {
		t.Logf("%s observed at %s (its router's WAN)", h.svc, watch.observedAddr(h))
	}
	for _, h := range hs[1:] {
		st, err := natStatusOf(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range st.Addrs {
			if strings.HasPrefix(a, "/ip4/"+h.wan+"/") {
				t.Errorf("%s advertises %s, its router's WAN address, which AutoNAT never confirmed", h.svc, a)
			}
		}
		if st.Reachability == "public" {
			t.Errorf("%s behind NAT: reachability public", h.svc)
		}
	}

	m := listenMapping(t, 3)
	for i, h := range hs[1:] {
		lport := 5555 + i
		got := m.probe(t, c.container(h.svc), lport)
		ports := map[string]bool{}
		for _, a := range got {
			host, port, _ := net.SplitHostPort(a)
			if host != h.wan {
				t.Errorf("%s's flow arrived from %s, not from its router's WAN %s", h.svc, a, h.wan)
			}
			ports[port] = true
		}
		t.Logf("%s: local port %d to three destinations arrives from %v", h.svc, lport, got)
		if !h.symmetric && (len(ports) != 1 || !ports[strconv.Itoa(lport)]) {
			t.Errorf("cone NAT of %s: local port %d became %v, want %d for every destination", h.svc, lport, got, lport)
		}
		if h.symmetric && len(ports) < 2 {
			t.Errorf("symmetric NAT: local port %d became %v, want another port per destination", lport, got)
		}
	}

	// Unsolicited inbound: dropped without an answer (a timeout), or
	// refused (NAT_UNSOLICITED=reject), though the router's probe port
	// answers on its LAN.
	for _, h := range hs[1:] {
		for _, port := range []string{"4689", "4681"} {
			out, err := dockerExec(pubID, "nc", "-w", "3", h.wan, port)
			switch {
			case r.reject && (err == nil || !strings.Contains(out, "refused")):
				t.Errorf("public → %s:%s (%s's WAN): %v %q, want it refused", h.wan, port, h.router, err, out)
			case !r.reject && (err == nil || !strings.Contains(out, "timed out")):
				t.Errorf("public → %s:%s (%s's WAN): %v %q, want a timeout: dropped", h.wan, port, h.router, err, out)
			}
		}
		if out, err := dockerExec(c.container(h.svc), "nc", "-w", "3", h.lan, "4689"); err != nil {
			t.Errorf("%s → its router's LAN %s:4689: %v %q", h.svc, h.lan, err, out)
		}
	}
	lanIP, err := exec.Command("docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", c.container("cone1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := dockerExec(pubID, "nc", "-w", "3", strings.TrimSpace(string(lanIP)), "4681"); err == nil {
		t.Errorf("public reached cone1's LAN address %s directly: %q", lanIP, out)
	}
}

// relayDown kills the relay (the public node): the direct cone1–cone2
// connection and lookups over it go on; a file only sym has cannot be
// found (404, and a log line naming it) until the relay is back.
func (r *natRun) relayDown(t *testing.T) {
	c, pub, cone1, cone2, sym := r.c, r.pub, r.cone1, r.cone2, r.sym
	fresh := func(h *natHousehold, name string) fileCIDs {
		p := filepath.Join(h.lib, "Movies", name)
		writeRandom(t, p, 300000)
		f := hashFile(t, p)
		waiting.Until(t, h.svc+" ingests "+name, func() string { return checkMeta(&h.household, f.Canonical+"?local=1", f, nil) }, sweep)
		return f
	}
	coneNew := fresh(cone2, "While The Relay Is Down (2025).mkv")
	symNew := fresh(sym, "Only On Sym (2025).mkv")

	pubID := c.container("public")
	if out, err := exec.Command("docker", "kill", pubID).CombinedOutput(); err != nil {
		t.Fatalf("docker kill public: %v %s", err, out)
	}
	restarted := false
	defer func() { // the later scenarios need the relay, whatever failed here
		if !restarted {
			_ = exec.Command("docker", "start", pubID).Run()
			c.waitHealthy(2*time.Minute, "public")
		}
	}()
	waiting.Until(t, "cone1 notices the relay is gone", func() string {
		peers, err := natPeersOf(cone1)
		if err != nil {
			return err.Error()
		}
		if _, ok := peers[pub.peer]; ok {
			return "public still in cone1's peers"
		}
		if p := peers[cone2.peer]; p.Connection != "direct" {
			return fmt.Sprintf("cone1–cone2 did not stay direct: %+v", p)
		}
		return ""
	}, sweep)
	natResolveAll(t, cone1, cone2, []fileCIDs{coneNew})

	since := time.Now().UTC().Format(time.RFC3339Nano)
	code, m, err := getJSON(cone1.url, "/api/meta/"+symNew.Canonical, "")
	if e, _ := m["error"].(string); err != nil || code != http.StatusNotFound || e == "" {
		t.Errorf("cone1 looks up a file only sym has, relay down: %d %v %v, want 404 with a JSON error", code, m, err)
	} else {
		t.Logf("relay down, cone1 → sym's new file: %d %q", code, e)
	}
	logs, _ := exec.Command("docker", "logs", "--since", since, c.container("cone1")).CombinedOutput()
	line := ""
	for _, l := range strings.Split(string(logs), "\n") {
		if strings.Contains(l, symNew.Canonical) {
			line = l
			break
		}
	}
	if line == "" {
		t.Errorf("cone1 logged nothing naming %s after the failed lookup; its log:\n%s", symNew.Canonical, logs)
	} else {
		t.Logf("cone1's log: %s", line)
	}

	restarted = true
	if out, err := exec.Command("docker", "start", pubID).CombinedOutput(); err != nil {
		t.Fatalf("docker start public: %v %s", err, out)
	}
	back := time.Now()
	c.waitHealthy(2*time.Minute, "public")
	natResolveAll(t, cone1, sym, []fileCIDs{symNew})
	r.figure(t, "relay restarted: cone1 resolves a file only sym has %.1f s after docker start returned", time.Since(back).Seconds())
}

// natSaveLogs writes every node's and router's log to a temporary
// directory when the test failed, and says where.
func natSaveLogs(t *testing.T, c *composeNet) {
	if !t.Failed() {
		return
	}
	dir, err := os.MkdirTemp("", "metamesh-nat-logs-")
	if err != nil {
		t.Log(err)
		return
	}
	for _, s := range []string{"public", "cone1", "cone2", "sym", "router-cone1", "router-cone2", "router-sym"} {
		id, err := c.run("ps", "-q", s)
		if err != nil || strings.TrimSpace(id) == "" {
			continue
		}
		out, _ := exec.Command("docker", "logs", "-t", strings.TrimSpace(id)).CombinedOutput()
		_ = os.WriteFile(filepath.Join(dir, s+".log"), out, 0o644)
	}
	t.Logf("the NAT testnet's logs: %s", dir)
}

// natFiles hashes every file of a library.
func natFiles(t *testing.T, lib string) []fileCIDs {
	t.Helper()
	var out []fileCIDs
	for _, p := range libFiles(t, lib) {
		out = append(out, hashFile(t, p))
	}
	if len(out) == 0 {
		t.Fatalf("no files in %s", lib)
	}
	return out
}

// natResolveAll: from resolves every file of owner's by every CID to the
// right key-set, with owner as the source.
func natResolveAll(t *testing.T, from, owner *natHousehold, files []fileCIDs) {
	t.Helper()
	for _, f := range files {
		for _, cid := range f.all() {
			waiting.Until(t, from.svc+" resolves "+owner.svc+"'s "+cid, func() string {
				return checkMeta(&from.household, cid, f, []string{owner.peer})
			}, sweep)
		}
	}
}

// natSearch: a federated search on h for q finds a hit from owner.
func natSearch(t *testing.T, h *natHousehold, q string, owner *natHousehold) {
	t.Helper()
	waiting.Until(t, h.svc+" searches "+q, func() string {
		code, m, err := getJSON(h.url, "/api/search?federated=1&q="+q, "")
		if err != nil || code != http.StatusOK {
			return fmt.Sprintf("%d %v %v", code, err, m)
		}
		hits, _ := m["hits"].([]any)
		for _, x := range hits {
			hit, _ := x.(map[string]any)
			if hit["source"] == owner.peer || has(strs(hit["peers"]), owner.peer) {
				return ""
			}
		}
		return fmt.Sprintf("no hit from %s in %v", owner.svc, m)
	}, sweep)
}

// firstResolve asks from for every CID of owner's files (staggered, so the
// 5 s memory of a miss delays the figure less) until one resolves; it
// answers "after N s" (since start) or why none did.
func firstResolve(start time.Time, from, owner *natHousehold, files []fileCIDs, limit time.Duration) string {
	done := make(chan string, 1)
	stop := make(chan struct{})
	defer close(stop)
	k := 0
	for _, f := range files {
		for _, cid := range f.all() {
			go func(f fileCIDs, cid string, delay time.Duration) {
				time.Sleep(delay)
				for time.Since(start) < limit {
					select {
					case <-stop:
						return
					default:
					}
					if checkMeta(&from.household, cid, f, []string{owner.peer}) == "" {
						select {
						case done <- fmt.Sprintf("after %.1f s", time.Since(start).Seconds()):
						default:
						}
						return
					}
					time.Sleep(250 * time.Millisecond)
				}
			}(f, cid, time.Duration(k)*700*time.Millisecond)
			k++
		}
	}
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		return fmt.Sprintf("nothing within %s", limit)
	}
}

// natFetch: h's GET /api/file of f, a file of another household's,
// answers want: 200 with f's bytes, or 503 naming the provider
// "relayed".
func natFetch(t *testing.T, h *natHousehold, f fileCIDs, want int) {
	t.Helper()
	req, err := http.NewRequest("GET", h.url+"/api/file/"+f.Canonical, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: GET /api/file/%s: %v", h.svc, f.Canonical, err)
	}
	switch {
	case resp.StatusCode != want:
		t.Errorf("%s: GET /api/file of %s: %s %.300s, want %d", h.svc, f.Path, resp.Status, body, want)
	case want == 200:
		if data, err := os.ReadFile(f.Path); err != nil || !bytes.Equal(body, data) {
			t.Errorf("%s: GET /api/file of %s: %d bytes that are not the file's (%v)", h.svc, f.Path, len(body), err)
		}
	case !strings.Contains(string(body), `"relayed"`):
		t.Errorf("%s: GET /api/file of %s: %s, want the provider named relayed", h.svc, f.Path, body)
	}
}
