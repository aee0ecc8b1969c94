package testnet

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
)

func randBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// file adds a file to node i and returns its three CIDs once node i has
// ingested it.
func file(t *testing.T, c *Cluster, i int, name string, size int) ingest.FileHashes {
	t.Helper()
	p := c.AddFile(i, name, randBytes(t, size))
	h, err := ingest.HashFile(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	c.WaitFor(fmt.Sprintf("node %d to ingest %s", i, name), 30*time.Second, func() bool {
		code, m := c.Nodes[i].Get("/api/meta/" + h.SHA256 + "?local=1")
		return code == 200 && m["source"] == "local"
	})
	return h
}

// announced waits until node i's announcer provided at least n CIDs.
func announced(c *Cluster, i, n int) {
	c.WaitFor(fmt.Sprintf("node %d to provide %d CIDs", i, n), 30*time.Second, func() bool {
		return c.Nodes[i].Node.ProvideStats().Provided >= int64(n)
	})
}

// lookup asks node i for cid until it answers 200 (the DHT may need a
// moment to spread) and returns the document.
func lookup(t *testing.T, c *Cluster, i int, cid string) map[string]any {
	t.Helper()
	var doc map[string]any
	c.WaitFor(fmt.Sprintf("node %d to resolve %s", i, cid), 40*time.Second, func() bool {
		code, m := c.Nodes[i].Get("/api/meta/" + url.PathEscape(cid))
		doc = m
		return code == 200
	})
	return doc
}

func strs(v any) []string {
	xs, _ := v.([]any)
	out := []string{}
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// noLocalPath fails if the document carries anything of the producer's
// local paths.
func noLocalPath(t *testing.T, doc map[string]any, lib string) {
	t.Helper()
	raw, _ := json.Marshal(doc)
	if strings.Contains(string(raw), lib) {
		t.Errorf("a local path of the producer crossed the wire: %s", raw)
	}
	for _, k := range []string{"filePath", "filePathBytes"} {
		if _, ok := doc[k]; ok {
			t.Errorf("federated document has %s", k)
		}
	}
	if d := strs(doc["duplicates"]); len(d) > 0 {
		t.Errorf("federated document has duplicates %v", d)
	}
}

// A 3-node chain (C knows only B): C resolves A's canonical CID through
// the DHT and its midhash through the fan-out, with every CID of the file
// in the answer and no path of A's.
func TestChain_ThreeNodes(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Chain()
	a, cNode := c.Nodes[0], 2
	h := file(t, c, 0, "Movies/Some Film (2001)/some.film.2001.mkv", 300<<10) // two chunks: IPFS ≠ sha2-256
	announced(c, 0, 1)

	doc := lookup(t, c, cNode, h.Canonical)
	if doc["source"] != a.PeerID {
		t.Errorf("source = %v, want node 0 %s", doc["source"], a.PeerID)
	}
	if !slices.Contains(strs(doc["providers"]), a.PeerID) {
		t.Errorf("providers = %v, want node 0 among them", doc["providers"])
	}
	want := []string{h.Midhash, h.SHA256, h.IPFS}
	slices.Sort(want)
	if got := strs(doc["cids"]); !slices.Equal(got, want) {
		t.Errorf("cids = %v, want %v", got, want)
	}
	if doc["canonical_cid"] != h.Canonical {
		t.Errorf("canonical_cid = %v, want %s", doc["canonical_cid"], h.Canonical)
	}
	noLocalPath(t, doc, a.Library)

	// The midhash has no provider record: node 1 finds it by asking its
	// peers. (Node 2 now knows it from the first lookup, so ask node 1.)
	doc = lookup(t, c, 1, h.Midhash)
	if got := strs(doc["cids"]); !slices.Equal(got, want) {
		t.Errorf("midhash lookup: cids = %v, want %v", got, want)
	}
	noLocalPath(t, doc, a.Library)
	// What node 2 knows only from node 0 is never announced by node 2.
	if st := c.Nodes[cNode].Node.ProvideStats(); st.Announced != 0 || st.Provided != 0 {
		t.Errorf("node 2 announces a file it only heard of: %+v", st)
	}
	// And node 2 answers every CID locally now (cached in its store).
	for _, id := range want {
		if code, m := c.Nodes[cNode].Get("/api/meta/" + id + "?local=1"); code != 200 || m["source"] != a.PeerID {
			t.Errorf("node 2 local answer for %s: %d %v", id, code, m["source"])
		}
	}
}

// Only the canonical CID is announced: the midhash's and the sha2-256's
// multihashes have no provider record from the node.
func TestAnnounce_CanonicalOnly(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Chain()
	h := file(t, c, 0, "clip.bin", 300<<10)
	announced(c, 0, 1)
	c.WaitFor("the canonical CID to have a provider", 30*time.Second, func() bool {
		_, m := c.Nodes[2].Get("/api/providers/" + h.Canonical)
		return slices.Contains(strs(m["providers"]), c.Nodes[0].PeerID)
	})
	for _, id := range []string{h.Midhash, h.SHA256} {
		_, m := c.Nodes[2].Get("/api/providers/" + id)
		if p := strs(m["providers"]); len(p) > 0 {
			t.Errorf("%s has providers %v; only the canonical CID may be announced", id, p)
		}
	}
	if got := c.Nodes[0].Node.ProvideStats().Announced; got != 1 {
		t.Errorf("announced %d CIDs for one file, want 1", got)
	}
}

// Every node of a 5-node chain resolves every other node's files.
func TestNetwork_FiveNodes(t *testing.T) {
	t.Parallel()
	c := New(t, 5)
	c.Chain()
	hs := make([]ingest.FileHashes, len(c.Nodes))
	for i := range c.Nodes {
		hs[i] = file(t, c, i, fmt.Sprintf("file%d.bin", i), 2000+i)
	}
	for i := range c.Nodes {
		announced(c, i, 1)
	}
	for i := range c.Nodes {
		for j := range c.Nodes {
			if i == j {
				continue
			}
			doc := lookup(t, c, i, hs[j].Canonical)
			if doc["source"] != c.Nodes[j].PeerID {
				t.Errorf("node %d resolved node %d's file from %v", i, j, doc["source"])
			}
		}
	}
}

// An unknown CID answers 404 within the lookup timeout, and the miss is
// cached.
func TestLookup_UnknownIs404(t *testing.T) {
	t.Parallel()
	c := New(t, 2, Options{LookupTimeout: 2 * time.Second})
	c.Chain()
	unknown := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	start := time.Now()
	code, m := c.Nodes[0].Get("/api/meta/" + unknown)
	if code != 404 || !strings.Contains(fmt.Sprint(m["error"]), "no file") {
		t.Fatalf("unknown CID: %d %v", code, m)
	}
	t.Logf("first miss took %s", time.Since(start))
	if code, _ := c.Nodes[0].Get("/api/meta/" + unknown); code != 404 {
		t.Errorf("second lookup: %d", code)
	}
	if code, _ := c.Nodes[0].Get("/api/meta/not-a-cid"); code != 400 {
		t.Errorf("malformed CID: %d, want 400", code)
	}
}

// Provider records really expire and are really renewed: with the
// reprovide interval and the records' validity cut to seconds, every
// announced CID of 3- and 4-node networks stays findable from every node
// over several cycles.
func TestReprovide_RecordsStayFindable(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			c := New(t, n, Options{ReprovideInterval: time.Second, ProviderRecordTTL: 3 * time.Second})
			c.Chain()
			var cids []string
			for i := range c.Nodes {
				cids = append(cids, file(t, c, i, fmt.Sprintf("f%d.bin", i), 3000+i).Canonical)
			}
			check := func(round int) {
				for i := range c.Nodes {
					for j, id := range cids {
						c.WaitFor(fmt.Sprintf("round %d: node %d to find node %d's provider record", round, i, j), 20*time.Second, func() bool {
							_, m := c.Nodes[i].Get("/api/providers/" + id)
							return slices.Contains(strs(m["providers"]), c.Nodes[j].PeerID)
						})
					}
				}
			}
			check(0)
			for round := 1; round <= 3; round++ {
				time.Sleep(4 * time.Second) // past the records' validity: only renewed ones are left
				check(round)
			}
			for i := range c.Nodes {
				if st := c.Nodes[i].Node.ProvideStats(); st.Provided < 4 {
					t.Errorf("node %d provided only %d times over 4 cycles", i, st.Provided)
				}
			}
		})
	}
}

// Partition and heal: files change on both sides of a cut; after the heal
// every node resolves every CID to the same key-set.
func TestPartition_Heal(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Connect(1, 0)
	c.Connect(2, 0)
	c.Connect(2, 1)
	before := file(t, c, 0, "shared-before.bin", 4000)
	c.Partition([]int{0}, []int{1, 2})
	a := file(t, c, 0, "left.bin", 5000)
	b := file(t, c, 1, "right.bin", 6000)
	// A change on the right: node 2 gets a file, then rewrites it.
	c.AddFile(2, "changing.bin", randBytes(t, 7000))
	time.Sleep(300 * time.Millisecond)
	changed := file(t, c, 2, "changing.bin", 7100)
	c.Heal()
	c.Connect(1, 0)
	c.Connect(2, 0)
	for _, h := range []ingest.FileHashes{before, a, b, changed} {
		var sets []string
		for i := range c.Nodes {
			doc := lookup(t, c, i, h.Canonical)
			sets = append(sets, strings.Join(strs(doc["cids"]), " "))
		}
		for i := 1; i < len(sets); i++ {
			if sets[i] != sets[0] {
				t.Errorf("%s resolves to different key-sets: %q", h.Canonical, sets)
			}
		}
	}
}

// A node killed and restarted on its data keeps its identity, address and
// files, announces them again, and answers lookups of nodes that never
// heard of it before.
func TestKillRestart_ReannouncesFromItsStore(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Connect(1, 0)
	h := file(t, c, 0, "kept.bin", 300<<10)
	announced(c, 0, 1)
	id := c.Nodes[0].PeerID
	c.Kill(0)
	c.Restart(0, 1)
	if c.Nodes[0].PeerID != id {
		t.Fatalf("peer ID changed over a restart: %s then %s", id, c.Nodes[0].PeerID)
	}
	announced(c, 0, 1)
	c.Connect(2, 1)
	doc := lookup(t, c, 2, h.Canonical)
	if doc["source"] != id {
		t.Errorf("after the restart node 2 resolved from %v, want %s", doc["source"], id)
	}
	if st := c.Nodes[0].Node.ProvideStats(); st.Announced != 1 {
		t.Errorf("announced %d CIDs after the restart, want 1", st.Announced)
	}
}

// What peers said of a file is a cache: past PeerRecordTTL a lookup asks
// again and the fresh record replaces the old one.
func TestLookup_StalePeerRecordIsRefreshed(t *testing.T) {
	t.Parallel()
	c := New(t, 2, Options{PeerRecordTTL: time.Second})
	c.Chain()
	h := file(t, c, 0, "rated.bin", 4000)
	st := c.Nodes[0].Node.Store()
	root, err := st.GetByCID(t.Context(), h.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	rate := func(v string) {
		if _, err := st.SetFields(t.Context(), root, map[string]string{"rating": v}); err != nil {
			t.Fatal(err)
		}
	}
	rate("7")
	if doc := lookup(t, c, 1, h.Canonical); doc["rating"] != "7" && doc["rating"] != 7.0 {
		t.Fatalf("first lookup: rating %v", doc["rating"])
	}
	rate("9")
	c.WaitFor("node 1 to see the new rating", 20*time.Second, func() bool {
		_, doc := c.Nodes[1].Get("/api/meta/" + h.Canonical)
		return fmt.Sprint(doc["rating"]) == "9"
	})
	if _, doc := c.Nodes[1].Get("/api/meta/" + h.Canonical + "?local=1"); fmt.Sprint(doc["rating"]) != "9" {
		t.Errorf("the refreshed record is not in node 1's store: %v", doc["rating"])
	}
	// And with node 0 gone, the old record is still served.
	c.Kill(0)
	time.Sleep(1100 * time.Millisecond)
	if code, doc := c.Nodes[1].Get("/api/meta/" + h.Canonical); code != 200 || fmt.Sprint(doc["rating"]) != "9" {
		t.Errorf("with its producer gone: %d %v", code, doc["rating"])
	}
}

// A file a node first heard of from a peer and then got itself: its
// document is local, and lists the peer among the providers next to the
// node.
func TestProviders_LocalFileAlsoFromPeer(t *testing.T) {
	t.Parallel()
	c := New(t, 2)
	c.Connect(0, 1)
	data := randBytes(t, 200<<10)
	p := c.AddFile(0, "shared.bin", data)
	h, err := ingest.HashFile(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	announced(c, 0, 1)
	if doc := lookup(t, c, 1, h.Canonical); doc["source"] != c.Nodes[0].PeerID {
		t.Fatalf("node 1's first answer: source %v, want node 0", doc["source"])
	}
	c.AddFile(1, "downloaded.bin", data)
	var doc map[string]any
	c.WaitFor("node 1 to hold the file itself", 30*time.Second, func() bool {
		_, doc = c.Nodes[1].Get("/api/meta/" + h.Canonical + "?local=1")
		return doc["source"] == "local"
	})
	want := []string{c.Nodes[1].PeerID, c.Nodes[0].PeerID}
	if got := strs(doc["providers"]); !slices.Equal(got, want) {
		t.Errorf("providers %v, want the node then the peer it heard from: %v", got, want)
	}
}
