package testnet

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
)

// The sweeping provider's keystore is the set of CIDs the node announces
// for its own files, and nothing else: a file added is provided, a file
// deleted leaves the keystore, a file known only from peers never enters
// it. It persists under the data directory: a restart resumes the cycle,
// and a file added while the node was down is provided once it is back.
func TestProvider_KeystoreFollowsTheStoreAndResumes(t *testing.T) {
	t.Parallel()
	c := New(t, 3)
	c.Connect(0, 1)
	c.Connect(2, 1)
	keys := func(i, n int) {
		t.Helper()
		c.WaitFor(fmt.Sprintf("node %d's keystore to hold %d CIDs", i, n), 30*time.Second, func() bool {
			return c.Nodes[i].Node.ProvideStats().Keys == int64(n)
		})
	}
	findable := func(from int, cid string, provider int) {
		t.Helper()
		c.WaitFor(fmt.Sprintf("node %d to find node %d's provider record of %s", from, provider, cid), 30*time.Second, func() bool {
			_, m := c.Nodes[from].Get("/api/providers/" + cid)
			return slices.Contains(strs(m["providers"]), c.Nodes[provider].PeerID)
		})
	}
	var hs []string
	var paths []string
	for k := range 3 {
		name := fmt.Sprintf("f%d.bin", k)
		hs = append(hs, file(t, c, 0, name, 4000+k).Canonical)
		paths = append(paths, c.Nodes[0].Library+"/"+name)
	}
	keys(0, 3)
	for _, h := range hs {
		findable(2, h, 0)
	}
	// Node 2 learns of a file from node 0: it never provides it.
	lookup(t, c, 2, hs[0])
	if st := c.Nodes[2].Node.ProvideStats(); st.Keys != 0 || st.Announced != 0 {
		t.Errorf("node 2 provides %d keys (%d announced) for files it knows only from a peer", st.Keys, st.Announced)
	}
	// A deleted file leaves the keystore.
	if err := os.Remove(paths[2]); err != nil {
		t.Fatal(err)
	}
	keys(0, 2)

	st := c.Nodes[0].Node.ProvideStats()
	if st.Walks == 0 || st.Messages == 0 || st.Provided < 3 || st.Connectivity != "online" {
		t.Errorf("provider statistics after three provides: %+v", st)
	}
	c.Kill(0)
	late := c.AddFile(0, "late.bin", randBytes(t, 5000))
	lateCID := canonicalOfFile(t, late)
	c.Restart(0, 1)
	st = c.Nodes[0].Node.ProvideStats()
	if !st.Resumed {
		t.Errorf("the restarted node did not resume its persisted cycle: %+v", st)
	}
	c.WaitFor("node 0 to ingest the file added while it was down", 30*time.Second, func() bool {
		code, _ := c.Nodes[0].Get("/api/meta/" + lateCID + "?local=1")
		return code == 200
	})
	keys(0, 3)
	findable(2, lateCID, 0)
	for _, h := range hs[:2] {
		findable(2, h, 0)
	}
}

// canonicalOfFile hashes the file at p as the node does.
func canonicalOfFile(t *testing.T, p string) string {
	t.Helper()
	h, err := ingest.HashFile(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return h.Canonical
}
