package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/kubotest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// A Kubo 0.42 daemon connected to a sharing household fetches a
// multi-chunk file by its IPFS CID (`ipfs cat`) and gets identical bytes,
// in an open federation and in a private one (the household's swarm key
// given to Kubo). From a household that does not share, Kubo gets
// nothing.
func TestKubo_FetchesASharedFile(t *testing.T) {
	t.Parallel()
	kubotest.Binary(t)
	data := make([]byte, 5<<20+4321)
	rand.Read(data)
	for _, tc := range []struct {
		name    string
		private bool
		share   bool
	}{{"open federation", false, true}, {"private federation", true, true}, {"not shared", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lib := t.TempDir()
			p := filepath.Join(lib, "Film (2001).mkv")
			writeOld(t, p, data)
			var key []byte
			a := startNodeWith(t, lib, func(c *node.Config) {
				c.ShareFiles = tc.share
				if tc.private {
					key = kubotest.NewSwarmKey()
					kf := filepath.Join(t.TempDir(), "swarm.key")
					if err := os.WriteFile(kf, key, 0o600); err != nil {
						t.Fatal(err)
					}
					c.P2P.SwarmKeyFile = kf
				}
			})
			h, err := ingest.HashFile(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			k := kubotest.Start(t, kubotest.Options{SwarmKey: key})
			k.Connect(t, a.P2PAddrs()[0])
			// A household that shares serves the file within the guard;
			// one that does not is asked for five seconds, the test's force.
			ctx := waiting.Context(t)
			if !tc.share {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
			}
			var got bytes.Buffer
			err = k.Cat(ctx, h.IPFS, &got)
			if !tc.share {
				if err == nil || got.Len() > 0 {
					t.Fatalf("Kubo fetched %d bytes from a household that does not share (%v)", got.Len(), err)
				}
				return
			}
			if err != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("ipfs cat %s: %d bytes, %v; want the file's %d\n%s", h.IPFS, got.Len(), err, len(data), k.Output())
			}
			if !strings.HasPrefix(h.IPFS, "bafybei") {
				t.Errorf("IPFS CID %s: want a dag-pb root (a multi-chunk file)", h.IPFS)
			}
		})
	}
}
