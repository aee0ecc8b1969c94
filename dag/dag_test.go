package dag_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/ingest"
)

// The index's root is the IPFS CID the node computes of the file (the
// hasher's, Kubo's), whatever the file's size: empty, one chunk, chunk
// boundaries, more than one level of links; every block it names comes
// back, leaves from the file's bytes, and each hashes to its CID.
func TestBuild_RootIsTheFilesIPFSCID(t *testing.T) {
	for _, size := range []int{0, 1, dag.ChunkSize - 1, dag.ChunkSize, dag.ChunkSize + 1, 3*dag.ChunkSize + 17, 174*dag.ChunkSize + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			data := make([]byte, size)
			rand.Read(data)
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := ingest.HashFile(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			ix, err := dag.Build(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if ix.Root.String() != h.IPFS {
				t.Fatalf("root %s, the hasher's IPFS CID %s", ix.Root, h.IPFS)
			}
			want := (size + dag.ChunkSize - 1) / dag.ChunkSize
			if size > 0 && len(ix.Leaves) != want {
				t.Errorf("%d leaves, want %d", len(ix.Leaves), want)
			}
			var total int
			for i, l := range ix.Leaves {
				if l.Offset != int64(total) {
					t.Fatalf("leaf %d at %d, want %d", i, l.Offset, total)
				}
				total += l.Size
				b, err := ix.Block(l.CID, bytes.NewReader(data))
				if err != nil || !bytes.Equal(b, data[l.Offset:l.Offset+int64(l.Size)]) {
					t.Fatalf("leaf %d: %v", i, err)
				}
			}
			if total != size {
				t.Errorf("the leaves cover %d bytes of %d", total, size)
			}
			for c := range ix.Internal {
				b, err := ix.Block(c, bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.Prefix().Sum(b)
				if err != nil || !got.Equals(c) {
					t.Errorf("internal node %s hashes to %s", c, got)
				}
			}
		})
	}
}

// A block whose bytes in the file changed is never answered; a CID of no
// block of the file is not found.
func TestBlock_ChangedFileAndStrangers(t *testing.T) {
	data := make([]byte, 2*dag.ChunkSize+5)
	rand.Read(data)
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Clone(data)
	changed[dag.ChunkSize+3] ^= 1
	if _, err := ix.Block(ix.Leaves[1].CID, bytes.NewReader(changed)); !errors.Is(err, dag.ErrChanged) {
		t.Errorf("a changed leaf: %v, want ErrChanged", err)
	}
	if _, err := ix.Block(ix.Leaves[2].CID, bytes.NewReader(data[:2*dag.ChunkSize])); !errors.Is(err, dag.ErrChanged) {
		t.Errorf("a truncated file: %v, want ErrChanged", err)
	}
	mh, _ := multihash.Sum([]byte("another file"), multihash.SHA2_256, -1)
	if _, err := ix.Block(cid.NewCidV1(cid.Raw, mh), bytes.NewReader(data)); !errors.Is(err, dag.ErrNotInDAG) {
		t.Errorf("a stranger's block: %v, want ErrNotInDAG", err)
	}
}

// BenchmarkIndex builds the index of a 1 GiB file (in memory, random
// bytes) and reports its size per GiB of file, against the 0.1% budget,
// and its build time per GiB (make bench).
//
//	go test ./dag -run '^$' -bench Index -benchtime 1x
func BenchmarkIndex(b *testing.B) {
	const size = 1 << 30
	data := make([]byte, size)
	rand.Read(data)
	start := time.Now()
	ix, err := dag.Build(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	per := float64(ix.Bytes()) / float64(size)
	fmt.Printf("\nindex of a 1 GiB file: %d leaves, %d internal nodes, %d bytes (%.3f%% of the file; budget 0.1%%), built in %s (%.0f MB/s)\n\n",
		len(ix.Leaves), len(ix.Internal), ix.Bytes(), 100*per, took.Round(time.Millisecond), float64(size)/took.Seconds()/1e6)
	b.ReportMetric(100*per, "%-of-file")
	b.ReportMetric(took.Seconds(), "s/GiB")
}
