package node

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// A CID is a promise about bytes. A peer's file is fetched over bitswap by
// an IPFS CID, whose blocks bitswap verifies; asked by another of its CIDs
// (a sha2-256 or a midhash one), the bytes are only as good as the record
// that paired the two, and any household can sign any pairing. So before
// the first byte goes out under the asked CID, the pairing is checked
// against the bytes: a midhash by its 1 MiB sample, a sha2-256 by the
// whole file. A pairing the bytes disprove is dropped with the record
// that made it, and the peers that signed it are not believed for about a
// day (federation.Household.Disproved). Pairings that held are remembered
// (in memory, up to maxCheckedPairs), so a player's next range request
// streams at once.

// maxCheckedPairs bounds the pairings remembered as checked.
const maxCheckedPairs = 10_000

// pairChecks remembers which (asked CID, IPFS CID) pairings the bytes
// held to, and counts those they disproved.
type pairChecks struct {
	mu        sync.Mutex
	held      map[[2]string]bool
	disproved atomic.Int64
}

func newPairChecks() *pairChecks { return &pairChecks{held: map[[2]string]bool{}} }

func (p *pairChecks) checked(asked, root string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[[2]string{asked, root}]
}

func (p *pairChecks) hold(asked, root string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.held) >= maxCheckedPairs {
		clear(p.held) // a cache: checked again when asked
	}
	p.held[[2]string{asked, root}] = true
}

// errDisproved: the bytes of the IPFS CID a record paired with the asked
// CID are not the asked CID's. The record is gone when it is returned.
var errDisproved = errors.New("the bytes do not match the CID asked for")

// check says how asked's bytes are checked against a fetch of root:
// nothing to check (the same CID, or bitswap checks it), the midhash
// sample, the whole file's sha2-256; an error for a CID whose bytes this
// node cannot check.
type check int

const (
	checkNone check = iota
	checkMidhash
	checkSHA256
)

func checkOf(asked string, root cid.Cid) (check, error) {
	if asked == root.String() {
		return checkNone, nil
	}
	c, err := cid.Decode(asked)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", api.ErrBadRequest, err)
	}
	pre := c.Prefix()
	switch {
	case pre.Codec == protocol.CodeMidhash256:
		return checkMidhash, nil
	case pre.Codec == protocol.CodeRaw && pre.MhType == protocol.CodeSHA2_256:
		return checkSHA256, nil
	}
	return 0, fmt.Errorf("%w: the bytes of %s (a %s CID) cannot be checked against it here, so they are not served under it: ask for the file by its IPFS CID, whose blocks are checked as they come",
		api.ErrUnprocessable, asked, protocol.Tier(protocol.Rank(asked)))
}

// verified checks f, a fetch of root, against asked (check k) before its
// first byte is served, and leaves it at its start.
func verified(f *share.File, asked string, k check) (bool, error) {
	var got cid.Cid
	var err error
	switch k {
	case checkNone:
		return true, nil
	case checkMidhash:
		got, err = protocol.Midhash256(seekReaderAt{f}, int64(f.Size()))
	case checkSHA256:
		h := sha256.New()
		if _, err = f.WriteTo(h); err == nil {
			got, err = protocol.SHA256CID(h.Sum(nil))
		}
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return got.String() == asked, nil
}

// seekReaderAt reads at an offset by seeking (a fetch reads in order;
// a seek fetches only the blocks from there on).
type seekReaderAt struct{ io.ReadSeeker }

func (r seekReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(r, b)
}

// fetchChecked fetches the file pf names for asked, by the first of its
// IPFS CIDs whose bytes hold to asked. A pairing the bytes disprove drops
// the record (the peer-only root) and marks the peers that signed it;
// errDisproved then, so the caller looks the CID up again.
func (n *Node) fetchChecked(ctx context.Context, asked string, pf peerFetch) (*share.File, error) {
	var lastErr error
	for _, root := range pf.roots {
		k, err := checkOf(asked, root)
		if err != nil {
			return nil, err
		}
		if n.pairs.checked(asked, root.String()) {
			k = checkNone
		}
		f, err := n.shr.Fetch(ctx, root, pf.providers)
		if err != nil {
			lastErr = err
			continue
		}
		ok, err := verified(f, asked, k)
		if err != nil {
			f.Close()
			lastErr = err
			continue
		}
		if ok {
			if k != checkNone {
				n.pairs.hold(asked, root.String())
			}
			return f, nil
		}
		f.Close()
		liars := vouchers(pf.doc, asked, root.String())
		n.pairs.disproved.Add(1)
		n.hh.Disproved(liars...)
		n.log.Warn("peers paired a CID with another file's bytes: their record is dropped and they are not believed for a day",
			"cid", asked, "ipfs", root, "peers", liars)
		dctx, cancel := context.WithTimeout(context.Background(), federation.RequestTimeout)
		err = n.st.DeleteRoot(dctx, pf.doc.Root)
		cancel()
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("dropping a record its bytes disproved: %w", err)
		}
		return nil, fmt.Errorf("%w: %s's bytes are not %s's", errDisproved, root, asked)
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("%w: the records of %s carry no IPFS CID to fetch its blocks by", api.ErrNotFound, asked)
	}
	return nil, lastErr
}

// vouchBoth are the peers whose records carried both a and b.
func vouchBoth(doc store.Document, a, b string) []string {
	var both []string
	for _, p := range doc.Learned[b] {
		if slices.Contains(doc.Learned[a], p) {
			both = append(both, p)
		}
	}
	return both
}

// vouchers are the peers that signed a record pairing a with b: those
// that vouch for both, else those that vouch for b.
func vouchers(doc store.Document, a, b string) []peer.ID {
	both := vouchBoth(doc, a, b)
	if len(both) == 0 {
		both = doc.Learned[b]
	}
	var out []peer.ID
	for _, s := range both {
		if id, err := peer.Decode(s); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// ipfsCIDsOf are the IPFS CIDs a document's file may be fetched by, for
// asked: asked itself when it is one (a dag-pb root, or a raw sha2-256
// CID when no dag-pb one is known: a file of one chunk), else its dag-pb
// members, those that more of the peers vouching for asked also vouch
// for first; a raw sha2-256 member when there is no dag-pb one.
func ipfsCIDsOf(doc store.Document, asked string) []cid.Cid {
	var dagpb []cid.Cid
	var sha cid.Cid
	for _, s := range doc.CIDs {
		c, err := cid.Decode(s)
		if err != nil || c.Version() != 1 {
			continue
		}
		pre := c.Prefix()
		if pre.MhType != protocol.CodeSHA2_256 {
			continue
		}
		switch pre.Codec {
		case protocol.CodeDagPB:
			dagpb = append(dagpb, c)
		case protocol.CodeRaw:
			sha = c
		}
	}
	for _, c := range dagpb {
		if c.String() == asked {
			return []cid.Cid{c}
		}
	}
	if len(dagpb) == 0 {
		// Every household computes the IPFS CID of each file it vouches
		// for: a record without a dag-pb one is of a one-chunk file,
		// whose IPFS CID is its raw sha2-256 one.
		if sha.Defined() {
			return []cid.Cid{sha}
		}
		return nil
	}
	both := func(c cid.Cid) int { return len(vouchBoth(doc, asked, c.String())) }
	slices.SortStableFunc(dagpb, func(a, b cid.Cid) int { return both(b) - both(a) })
	return dagpb
}
