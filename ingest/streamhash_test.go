package ingest_test

import (
	"context"
	"os"
	"testing"

	"github.com/metamesh/node/ingest"
)

// streamHash writes b to a StreamHasher told size, in pieces of piece
// bytes (pieces that straddle the midhash sample's edges), and returns
// its sum.
func streamHash(t *testing.T, ctx context.Context, b []byte, size int64, piece int) (ingest.FileHashes, error) {
	t.Helper()
	s := ingest.NewStreamHasher(ctx, size)
	for len(b) > 0 {
		n := min(piece, len(b))
		if _, err := s.Write(b[:n]); err != nil {
			break // the hasher stopped: Sum says why
		}
		b = b[n:]
	}
	return s.Sum()
}

// TestStreamHasher: the CIDs of bytes that pass are those HashFile
// computes of the same bytes in a file; the midhash only when the size was
// known first and the stream was that long.
func TestStreamHasher(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name        string
		size, piece int
	}{
		{"smaller than a chunk", 1000, 7},
		{"one chunk", ingest.IPFSChunkSize, 1 << 16},
		{"several chunks, the sample in the middle", 3<<20 + 12345, 77_777},
		{"in one write", 2<<20 + 1, 4 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pattern(t, dir, "f", tt.size)
			want, err := ingest.HashFile(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			want.Path = ""
			got, err := streamHash(t, context.Background(), b, int64(tt.size), tt.piece)
			if err != nil || got != want {
				t.Errorf("size known: %+v, %v; want %+v", got, err, want)
			}
			want.Midhash = ""
			got, err = streamHash(t, context.Background(), b, -1, tt.piece)
			if err != nil || got != want {
				t.Errorf("size unknown: %+v, %v; want %+v", got, err, want)
			}
			got, err = streamHash(t, context.Background(), b, int64(tt.size)+1, tt.piece)
			if err != nil || got != want {
				t.Errorf("fewer bytes than told: %+v, %v; want %+v (no midhash)", got, err, want)
			}
		})
	}
}

// TestStreamHasher_Cancelled: a hasher whose context ended takes no more
// bytes, and Sum says why.
func TestStreamHasher_Cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := streamHash(t, ctx, make([]byte, 3<<20), 3<<20, 1<<20); err == nil {
		t.Error("a cancelled hasher returned CIDs")
	}
}
