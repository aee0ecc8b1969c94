package ingest_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/protocol"
)

// pattern writes the fixture the vectors were made from: byte i is
// (31*i + 7) mod 251.
func pattern(tb testing.TB, dir, name string, size int) string {
	tb.Helper()
	b := make([]byte, size)
	for i := range b {
		b[i] = byte((31*i + 7) % 251)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestHashFile_KuboVectors checks the one-pass hasher against CIDs that
// Kubo 0.42.0 printed for `ipfs add --only-hash --cid-version=1` on the same
// bytes (testdata/ipfs-vectors.tsv).
func TestHashFile_KuboVectors(t *testing.T) {
	f, err := os.Open("testdata/ipfs-vectors.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		name, wantSHA, wantIPFS := cols[0], cols[2], cols[3]
		size, _ := strconv.Atoi(cols[1])
		rows++
		t.Run(name, func(t *testing.T) {
			if testing.Short() && size > 8<<20 {
				t.Skip("large vector skipped in -short")
			}
			p := pattern(t, dir, name, size)
			got, err := ingest.HashFile(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got.SHA256 != wantSHA {
				t.Errorf("sha2-256 = %s, want %s", got.SHA256, wantSHA)
			}
			if got.IPFS != wantIPFS {
				t.Errorf("ipfs = %s, want %s (kubo)", got.IPFS, wantIPFS)
			}
			if got.Canonical != wantIPFS {
				t.Errorf("canonical = %s, want the IPFS CID", got.Canonical)
			}
			if got.Size != int64(size) || protocol.Rank(got.Midhash) != 10 {
				t.Errorf("size %d midhash %s", got.Size, got.Midhash)
			}
			os.Remove(p)
		})
	}
	if rows != 6 {
		t.Fatalf("read %d vectors, want 6", rows)
	}
}

func TestHashFile_Errors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ingest.HashFile(context.Background(), filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ingest.HashFile(context.Background(), dir); err == nil {
		t.Error("directory hashed")
	}
	p := pattern(t, dir, "x", 3<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ingest.HashFile(ctx, p); err == nil {
		t.Error("cancelled context: hash succeeded")
	}
}
