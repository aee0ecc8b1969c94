package kubotest

import (
	"context"
	"os"
	"testing"
	"time"
)

// BitswapThroughput measures Kubo to Kubo bitswap of one file over
// loopback: it starts two daemons, adds file on the first (not timed),
// connects the second to it and times the second's `ipfs cat` of the
// CID, every block fetched over bitswap. It returns the bytes per second
// over the whole cat and the time to its first byte. It skips without
// Kubo (Binary) and fails the test when the cat fails or returns another
// number of bytes than the file has.
//
// It is the reference a benchmark of the node's own fetch of the same
// file compares with; the daemons are stopped at tb's cleanup.
func BitswapThroughput(tb testing.TB, file string) (bytesPerSec float64, ttfb time.Duration) {
	tb.Helper()
	st, err := os.Stat(file)
	if err != nil {
		tb.Fatal(err)
	}
	from, to := Start(tb, Options{}), Start(tb, Options{})
	cid := from.Add(tb, file)
	to.Connect(tb, from.Addrs()[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	t, err := to.TimedCat(ctx, cid)
	if err != nil {
		tb.Fatalf("kubotest: cat %s from %s: %v", cid, from.ID(), err)
	}
	if t.Bytes != st.Size() {
		tb.Fatalf("kubotest: cat %s: %d bytes, the file has %d", cid, t.Bytes, st.Size())
	}
	return t.BytesPerSec(), t.TTFB
}
