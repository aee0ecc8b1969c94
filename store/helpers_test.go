package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// content stands for a file's bytes in tests: files with equal mid share
// a midhash; files with equal full share sha2-256 and IPFS CIDs. A real
// file has mid determined by full; a collision is two contents with one
// mid and different full.
type content struct{ mid, full int }

func digest(kind string, n int) []byte {
	d := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", kind, n)))
	return d[:]
}

func (c content) hashes() store.Hashes {
	m, _ := protocol.MidhashCID(digest("mid", c.mid))
	s, _ := protocol.SHA256CID(digest("sha", c.full))
	mh, _ := multihash.Encode(digest("ipfs", c.full), protocol.CodeSHA2_256)
	return store.Hashes{Midhash: m.String(), SHA256: s.String(), IPFS: cid.NewCidV1(protocol.CodeDagPB, mh).String()}
}

func stat(path string, size int64) store.FileStat {
	return store.FileStat{Path: path, Size: size, MtimeNs: 1_700_000_000_000_000_000 + size}
}

var ctx = context.Background()

func mustCheck(tb testing.TB, s *store.Store) {
	tb.Helper()
	v, err := s.Check(ctx)
	if err != nil {
		tb.Fatalf("Check: %v", err)
	}
	for _, x := range v {
		tb.Errorf("violation: %s", x)
	}
	if len(v) > 0 {
		tb.FailNow()
	}
}

func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// ingest arrives and confirms a file, like the ingest pipeline does.
func ingest(tb testing.TB, s *store.Store, f store.FileStat, c content) store.Outcome {
	tb.Helper()
	h := c.hashes()
	if _, err := s.Arrive(ctx, f, h.Midhash); err != nil {
		tb.Fatal(err)
	}
	o, err := s.Confirm(ctx, f, h)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// dumpKeys lists the store's keys but meta:layout, which Open writes.
func dumpKeys(tb testing.TB, s *store.Store) []string {
	tb.Helper()
	keys, err := s.DebugKeys(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return slices.DeleteFunc(keys, func(k string) bool { return k == "meta:layout" })
}
