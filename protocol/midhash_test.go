package protocol_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/metamesh/node/protocol"
)

// content is the deterministic fixture the vectors in testdata were
// computed from: byte i is (31*i + 7) mod 251.
func content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((31*i + 7) % 251)
	}
	return b
}

func TestMidhash256_Vectors(t *testing.T) {
	f, err := os.Open("testdata/midhash-vectors.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		name, wantMid, wantSHA := cols[0], cols[2], cols[3]
		size, err := strconv.Atoi(cols[1])
		if err != nil {
			t.Fatal(err)
		}
		rows++
		t.Run(name, func(t *testing.T) {
			data := content(size)
			got, err := protocol.Midhash256(bytes.NewReader(data), int64(size))
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != wantMid {
				t.Errorf("midhash256 = %s, want %s", got, wantMid)
			}
			if mb, err := protocol.MidhashBytes(data); err != nil || mb.String() != wantMid {
				t.Errorf("MidhashBytes = %s %v, want %s", mb, err, wantMid)
			}
			sum := sha256.Sum256(data)
			sc, err := protocol.SHA256CID(sum[:])
			if err != nil {
				t.Fatal(err)
			}
			if sc.String() != wantSHA {
				t.Errorf("sha2-256 CID = %s, want %s", sc, wantSHA)
			}
		})
	}
	if rows != 5 {
		t.Fatalf("read %d vectors, want 5", rows)
	}
}

func TestMidhashSample(t *testing.T) {
	const M = protocol.MidhashSampleSize
	tests := []struct {
		size, off, n int64
	}{
		{0, 0, 0},
		{1, 0, 1},
		{M, 0, M},
		{M + 1, 0, M},
		{M + 2, 1, M},
		{3 * M, M, M},
	}
	for _, tt := range tests {
		off, n := protocol.MidhashSample(tt.size)
		if off != tt.off || n != tt.n {
			t.Errorf("MidhashSample(%d) = (%d, %d), want (%d, %d)", tt.size, off, n, tt.off, tt.n)
		}
	}
}

func TestMidhash256_ShortReadFails(t *testing.T) {
	if _, err := protocol.Midhash256(bytes.NewReader(make([]byte, 10)), 20); err == nil {
		t.Fatal("Midhash256 on a file shorter than its size succeeded")
	}
}
