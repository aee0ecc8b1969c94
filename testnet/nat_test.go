package testnet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node"
)

// natCluster is a relay (node 0, --relay-service) and n households behind
// NAT (1..n) that bootstrap from it, each holding a reservation with it.
func natCluster(t *testing.T, n int, relay func(cfg *node.Config)) *Cluster {
	t.Helper()
	nat := []int{}
	for i := 1; i <= n; i++ {
		nat = append(nat, i)
	}
	c := New(t, n+1, Options{NAT: nat, LookupTimeout: 5 * time.Second, Configure: func(c *Cluster, i int, cfg *node.Config) {
		if i == 0 {
			cfg.P2P.RelayService = true
			if relay != nil {
				relay(cfg)
			}
			return
		}
		cfg.P2P.Bootstrap = []string{c.Nodes[0].Addr}
		// What AutoNAT v2 concludes behind a real NAT (private, so a DHT
		// client); on loopback it probes nothing and the node would
		// serve a DHT nobody can dial it for.
		cfg.P2P.DHTMode = "client"
	}})
	for i := 1; i <= n; i++ {
		waitReserved(t, c, i, c.Nodes[0].PeerID)
	}
	return c
}

// waitReserved waits until node i holds a reservation with relay.
func waitReserved(t *testing.T, c *Cluster, i int, relay string) {
	t.Helper()
	c.WaitFor("a relay reservation", 30*time.Second, func() bool {
		_, st := c.Nodes[i].Get("/api/status")
		for _, r := range st["relays"].([]any) {
			r := r.(map[string]any)
			if r["id"] == relay && r["reserved"] == true && len(strs(r["addrs"])) > 0 {
				return true
			}
		}
		return false
	})
}

// peerEntry is node i's /api/peers entry for peer id, or nil.
func peerEntry(c *Cluster, i int, id string) map[string]any {
	_, ps := c.Nodes[i].Get("/api/peers")
	for _, p := range ps["peers"].([]any) {
		if p := p.(map[string]any); p["id"] == id {
			return p
		}
	}
	return nil
}

// Two households behind NAT exchange records and search hits through the
// relay of a third (loopback cannot be hole-punched, so the connection
// stays relayed, as behind a symmetric NAT): by every CID, with the
// connection shown as relayed and the relay's reservation in the status.
func TestNAT_RelayedRecordsAndSearch(t *testing.T) {
	t.Parallel()
	c := natCluster(t, 2, nil)
	relay := c.Nodes[0].PeerID
	fh := file(t, c, 2, "Relayed Film (2004).mkv", 300_000)

	_, st := c.Nodes[1].Get("/api/status")
	if st["reachability"] != "unknown" {
		t.Errorf("reachability on loopback = %v, want unknown (AutoNAT probes only public addresses)", st["reachability"])
	}
	if st["relayService"] != false {
		t.Errorf("relayService = %v on a household", st["relayService"])
	}
	if _, st := c.Nodes[0].Get("/api/status"); st["relayService"] != true {
		t.Errorf("relayService = %v on the relay", st["relayService"])
	}

	// The canonical CID through the DHT (its provider record carries the
	// household's /p2p-circuit address), then the others from the
	// connected household.
	announced(c, 2, 1)
	for _, cid := range []string{fh.Canonical, fh.SHA256, fh.Midhash} {
		doc := lookup(t, c, 1, cid)
		if doc["source"] != c.Nodes[2].PeerID {
			t.Errorf("%s: source %v, want node 2", cid, doc["source"])
		}
		noLocalPath(t, doc, c.Nodes[2].Library)
	}
	p := peerEntry(c, 1, c.Nodes[2].PeerID)
	if p == nil {
		t.Fatal("node 2 is not among node 1's peers after a lookup")
	}
	if p["connection"] != "relayed" || p["relay"] != relay || p["transport"] != "tcp" {
		t.Errorf("node 1's entry of node 2 = %v, want relayed through %s over tcp", p, relay)
	}
	if p := peerEntry(c, 1, relay); p == nil || p["connection"] != "direct" {
		t.Errorf("node 1's entry of the relay = %v, want direct", p)
	}

	code, res := c.Nodes[1].Get("/api/search?q=relayed+film&federated=1")
	if code != 200 {
		t.Fatalf("federated search: %d %v", code, res)
	}
	found := false
	for _, h := range res["hits"].([]any) {
		h := h.(map[string]any)
		found = found || (h["source"] == c.Nodes[2].PeerID && h["cid"] == fh.Canonical)
	}
	if !found {
		t.Errorf("federated search over the relay did not find node 2's film: %v", res)
	}

	body := metricsText(t, c, 1)
	for _, want := range []string{"metamesh_relay_reservations 1", "metamesh_relayed_connections 1", `metamesh_reachability{state="unknown"} 1`, `metamesh_holepunch_total{result="success"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("node 1's metrics lack %q", want)
		}
	}
	if body := metricsText(t, c, 0); !strings.Contains(body, "libp2p_relaysvc_") {
		t.Errorf("the relay's metrics lack the relay service's libp2p_relaysvc_* figures")
	}

	// Not connected to node 2, node 1 still finds its film: the keyword
	// index names node 2 with its /p2p-circuit address, and the search
	// dials it through the relay.
	c.WaitFor("a search from node 1, cut from node 2, to find node 2 through the index and the relay", time.Minute, func() bool {
		c.Nodes[1].Node.Disconnect(mustPeer(t, c.Nodes[2].PeerID))
		m := federatedSearch(t, c, 1, "relayed film")
		return hitFrom(m, fh.Canonical, c.Nodes[2].PeerID) && m["fromIndex"].(float64) >= 1
	})
}

// A record that does not fit in the relay's data limit (128 KiB each way
// per circuit) fails the lookup with a 404 that says so, and a later
// lookup of a small record still crosses the relay.
func TestNAT_RecordOverRelayLimit(t *testing.T) {
	t.Parallel()
	c := natCluster(t, 2, nil)
	big := file(t, c, 2, "Big Record (2001).mkv", 200_000)
	small := file(t, c, 2, "Small Record (2002).mkv", 200_000)
	// An outside writer gives the file 180 KiB of metadata (three values
	// of 60 KiB: a record value may hold 64 KiB): its record is larger
	// than a circuit may carry.
	bulkNotes(t, c, 2, big, 3, 60<<10)
	announced(c, 2, 2)
	code, doc := c.Nodes[1].Get("/api/meta/" + url.PathEscape(big.Canonical))
	if code != 404 {
		t.Fatalf("a record above the relay's limit: %d %v, want 404", code, doc)
	}
	if msg, _ := doc["error"].(string); !strings.Contains(msg, "relay that cut the record off") {
		t.Errorf("the 404 does not say the relay cut the record off: %q", msg)
	}
	if doc := lookup(t, c, 1, small.Canonical); doc["source"] != c.Nodes[2].PeerID {
		t.Errorf("small record after the big one: source %v", doc["source"])
	}
}

// Two records of 80 KiB each fit one circuit alone but not together
// (128 KiB each way): the second, cut off by the relay, is asked again
// over a fresh circuit and comes through.
func TestNAT_RecordOnFreshCircuit(t *testing.T) {
	t.Parallel()
	c := natCluster(t, 2, nil)
	var files []ingest.FileHashes
	for i, name := range []string{"First Half (2001).mkv", "Second Half (2002).mkv"} {
		f := file(t, c, 2, name, 200_000+i)
		bulkNotes(t, c, 2, f, 2, 40<<10) // 80 KiB of metadata
		files = append(files, f)
	}
	announced(c, 2, 2)
	if doc := lookup(t, c, 1, files[0].Canonical); doc["source"] != c.Nodes[2].PeerID {
		t.Errorf("first record: source %v, want node 2", doc["source"])
	}
	// One ask: the first answer took most of the circuit.
	if code, doc := c.Nodes[1].Get("/api/meta/" + url.PathEscape(files[1].Canonical)); code != 200 || doc["source"] != c.Nodes[2].PeerID {
		t.Errorf("second record: %d %v, want node 2's record", code, doc["error"])
	}
	if p := peerEntry(c, 1, c.Nodes[2].PeerID); p == nil || p["connection"] != "relayed" {
		t.Errorf("node 1's entry of node 2 = %v, want relayed", p)
	}
}

// The relay service relays only for the peers the relay's household
// lets in: with --allow-peer only allowed peers get a reservation, with
// --swarm-key only members of the private network; a household left out
// is never reachable through it.
func TestNAT_RelayServiceOnlyForItsFederation(t *testing.T) {
	t.Parallel()
	keyA, keyB := swarmKeyFile(t, 1), swarmKeyFile(t, 2)
	for _, tc := range []struct {
		name string
		// set configures member i once every member has started once.
		set func(c *Cluster, i int, cfg *node.Config)
	}{
		{"allow-peer", func(c *Cluster, i int, cfg *node.Config) {
			if i == 0 {
				cfg.P2P.AllowPeers = []string{c.Nodes[1].PeerID}
			}
		}},
		{"swarm-key", func(c *Cluster, i int, cfg *node.Config) {
			cfg.P2P.SwarmKeyFile = keyA
			if i == 2 {
				cfg.P2P.SwarmKeyFile = keyB
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := false
			c := New(t, 3, Options{NAT: []int{1, 2}, Configure: func(c *Cluster, i int, cfg *node.Config) {
				if i == 0 {
					cfg.P2P.RelayService = true
				} else {
					cfg.P2P.Bootstrap = []string{c.Nodes[0].Addr}
				}
				if started {
					tc.set(c, i, cfg)
				}
			}})
			// Every member's ID is known now: start them again with the
			// federation's rules, the relay first.
			started = true
			for i := range c.Nodes {
				c.Kill(i)
			}
			c.Restart(0)
			c.Restart(1)
			c.Restart(2)
			waitReserved(t, c, 1, c.Nodes[0].PeerID)
			fh := file(t, c, 1, "Inside (2010).mkv", 100_000)
			time.Sleep(2 * time.Second) // node 2 had every chance to reserve
			_, st := c.Nodes[2].Get("/api/status")
			for _, r := range st["relays"].([]any) {
				if r.(map[string]any)["reserved"] == true {
					t.Errorf("node 2, outside the relay's federation, holds a reservation: %v", r)
				}
			}
			if code, doc := c.Nodes[2].Get("/api/meta/" + fh.Canonical); code != 404 {
				t.Errorf("node 2 resolved node 1's file through the relay: %d %v", code, doc)
			}
		})
	}
}

func metricsText(t *testing.T, c *Cluster, i int) string {
	t.Helper()
	resp, err := http.Get("http://" + c.Nodes[i].Node.APIAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// swarmKeyFile writes a /key/swarm/psk/1.0.0/ key of 32 bytes of seed.
func swarmKeyFile(t *testing.T, seed byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "swarm.key")
	key := "/key/swarm/psk/1.0.0/\n/base16/\n" + strings.Repeat(fmt.Sprintf("%02x", seed), 32) + "\n"
	if err := os.WriteFile(p, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bulkNotes has an outside writer give node i's file n fields notes/<k>
// of size bytes each, and waits until its record carries them.
func bulkNotes(t *testing.T, c *Cluster, i int, f ingest.FileHashes, n, size int) {
	t.Helper()
	st, err := c.Nodes[i].Node.Store().Path(context.Background(), f.Path)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := redis.ParseURL(c.Nodes[i].redis.URL())
	rc := redis.NewClient(opts)
	defer rc.Close()
	for k := range n {
		name := string(rune('a' + k))
		if err := rc.Set(context.Background(), "file:"+string(st.Root)+"/notes/"+name, strings.Repeat(name, size), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor("the outside fields", time.Minute, func() bool {
		_, doc := c.Nodes[i].Get("/api/meta/" + f.Canonical + "?local=1")
		notes, _ := doc["notes"].(map[string]any)
		return len(notes) == n
	})
}
