package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// File is a peer's file as it is fetched: its bytes in order, each block
// verified against its CID as it arrives (bitswap checks every block it
// receives), seekable (a seek fetches only the blocks from there on).
type File struct {
	uio.DagReader
	done    func()
	sources func() []Source
	cancel  context.CancelFunc
	stall   time.Duration
	// why says what the providers did meanwhile, for a stall's error.
	why func() string
}

// Read reads on, ending the fetch when no byte came for the stall time
// (every provider left, or answers DONT_HAVE for a block: a file that
// changed or left the library at its household); the error says which.
func (f *File) Read(b []byte) (int, error) {
	t := time.AfterFunc(f.stall, f.cancel)
	n, err := f.DagReader.Read(b)
	if !t.Stop() && err != nil {
		err = fmt.Errorf("%w: no block came for %s: %s", ErrStalled, f.stall, f.why())
	}
	return n, err
}

// WriteTo is Read's (the DagReader's own WriteTo would skip the stall
// timer).
func (f *File) WriteTo(w io.Writer) (int64, error) {
	return io.CopyBuffer(w, struct{ io.Reader }{f}, make([]byte, 256<<10))
}

// ErrStalled: a fetch got no block for its stall time.
var ErrStalled = errors.New("the fetch stalled")

// Sources says what each provider answered so far.
func (f *File) Sources() []Source { return f.sources() }

// Close ends the fetch.
func (f *File) Close() error {
	err := f.DagReader.Close()
	f.cancel()
	f.done()
	return err
}

// Source is what one provider of a file answered a fetch.
type Source struct {
	Peer string `json:"peer"`
	// State is "shares" (it sent the file's root or said HAVE), "does not
	// share" (DONT_HAVE: it does not share its files), "relayed" (only a
	// connection through a relay: too narrow for a file), "unreachable"
	// (no connection) or "no answer".
	State string `json:"state"`
}

// UnavailableError says why no provider served a file.
type UnavailableError struct {
	CID     string
	Sources []Source
}

func (e *UnavailableError) Error() string {
	if len(e.Sources) == 0 {
		return fmt.Sprintf("no household that has %s is known", e.CID)
	}
	by := map[string][]string{}
	for _, s := range e.Sources {
		by[s.State] = append(by[s.State], shortPeer(s.Peer))
	}
	var parts []string
	for _, st := range []string{"does not share", "relayed", "unreachable", "no answer", "shares"} {
		ps := by[st]
		if len(ps) == 0 {
			continue
		}
		switch st {
		case "does not share":
			parts = append(parts, fmt.Sprintf("%s do(es) not share files (--share-files)", strings.Join(ps, ", ")))
		case "relayed":
			parts = append(parts, fmt.Sprintf("%s can only be reached through a relay, which carries too little for a file: bytes need a direct connection (after a hole punch)", strings.Join(ps, ", ")))
		case "unreachable":
			parts = append(parts, fmt.Sprintf("%s could not be reached", strings.Join(ps, ", ")))
		case "no answer":
			parts = append(parts, fmt.Sprintf("%s did not answer in time", strings.Join(ps, ", ")))
		case "shares":
			parts = append(parts, fmt.Sprintf("%s share(s) files but did not send this one in time", strings.Join(ps, ", ")))
		}
	}
	return fmt.Sprintf("no household served %s: %s", e.CID, strings.Join(parts, "; "))
}

func shortPeer(p string) string {
	if len(p) > 16 {
		return "peer …" + p[len(p)-8:]
	}
	return "peer " + p
}

// RootTimeout bounds the wait for a file's root from its providers.
const RootTimeout = 15 * time.Second

// punchTime is how long a provider reached only through a relay is given
// to turn the connection into a direct one (DCUtR's hole punch starts
// as soon as the relayed connection is up).
const punchTime = 5 * time.Second

// Fetch starts fetching the file whose IPFS CID is root from providers
// (its record's peers, the DHT's providers of its canonical CID): it
// connects to them, gets the root (which says the file's size) and
// returns the file, read in order as its blocks arrive, until ctx ends
// or the File is closed. Nothing is written to disk: blocks pass through
// a bounded cache. Without a provider that sends the root within
// RootTimeout, the error is an *UnavailableError saying what each
// provider answered.
func (x *Exchange) Fetch(ctx context.Context, root cid.Cid, providers []peer.ID) (*File, error) {
	h := x.cfg.Host
	var ps []peer.ID
	for _, p := range providers {
		if p != h.ID() && !containsPeer(ps, p) {
			ps = append(ps, p)
		}
	}
	done := x.track.fetch(root, ps)
	unreachable := x.connect(ctx, ps)
	fctx, fcancel := context.WithCancel(fetching(ctx))
	ng := merkledag.NewSession(fctx, x.dserv)
	nd, err := x.root(fctx, ng, root, ps, unreachable)
	if err != nil {
		defer done()
		fcancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnavailableError{CID: root.String(), Sources: x.sources(root, ps, unreachable)}
	}
	dr, err := uio.NewDagReader(fctx, nd, ng)
	if err != nil {
		done()
		fcancel()
		return nil, fmt.Errorf("%s is not a UnixFS file: %w", root, err)
	}
	return &File{DagReader: dr, done: done, cancel: fcancel, stall: x.cfg.Stall,
		sources: func() []Source { return x.sources(root, ps, unreachable) },
		why:     func() string { return x.stalled(root, ps) }}, nil
}

// root gets the file's root within RootTimeout, and gives up as soon as
// every provider said DONT_HAVE, could not be reached, or is still
// reached only through a relay after punchTime.
func (x *Exchange) root(ctx context.Context, ng ipld.NodeGetter, root cid.Cid, ps []peer.ID, unreachable map[peer.ID]bool) (ipld.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, RootTimeout)
	defer cancel()
	type result struct {
		nd  ipld.Node
		err error
	}
	ch := make(chan result, 1)
	go func() {
		nd, err := ng.Get(ctx, root)
		ch <- result{nd, err}
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case r := <-ch:
			return r.nd, r.err
		case <-tick.C:
			said := x.track.answers(root)
			refused := 0
			for _, p := range ps {
				have, ok := said[p]
				// Bitswap sends nothing over a relayed connection: a
				// provider still only relayed once a hole punch had
				// its time cannot serve.
				relayedOnly := time.Since(start) > punchTime && !direct(x.cfg.Host.Network().ConnsToPeer(p))
				if (ok && !have) || unreachable[p] || (!ok && relayedOnly) {
					refused++
				}
			}
			if refused == len(ps) {
				return nil, errors.New("every provider refused")
			}
		}
	}
}

// Probe fetches only root, afresh (not from a fetch's cache): whether
// the file can be fetched now and what each provider answers.
func (x *Exchange) Probe(ctx context.Context, root cid.Cid, providers []peer.ID) (*File, error) {
	x.store.cache.remove(root)
	return x.Fetch(ctx, root, providers)
}

// connect dials the providers the node holds no direct connection to,
// all at once; it returns those it could not reach.
func (x *Exchange) connect(ctx context.Context, ps []peer.ID) map[peer.ID]bool {
	h := x.cfg.Host
	var mu sync.Mutex
	failed := map[peer.ID]bool{}
	var wg sync.WaitGroup
	for _, p := range ps {
		if direct(h.Network().ConnsToPeer(p)) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := h.Connect(cctx, peer.AddrInfo{ID: p, Addrs: h.Peerstore().Addrs(p)}); err != nil {
				mu.Lock()
				failed[p] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// direct reports a connection that is not through a relay.
func direct(conns []network.Conn) bool {
	for _, c := range conns {
		if !c.Stat().Limited {
			return true
		}
	}
	return false
}

// sources says what each provider answered a fetch of root.
func (x *Exchange) sources(root cid.Cid, ps []peer.ID, unreachable map[peer.ID]bool) []Source {
	said := x.track.answers(root)
	h := x.cfg.Host
	var out []Source
	for _, p := range ps {
		st := "no answer"
		conns := h.Network().ConnsToPeer(p)
		switch have, ok := said[p]; {
		case ok && !have:
			st = "does not share"
		case ok && have:
			st = "shares"
		case len(conns) > 0 && !direct(conns):
			st = "relayed"
		case unreachable[p] || len(conns) == 0:
			st = "unreachable"
		}
		out = append(out, Source{Peer: p.String(), State: st})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Peer < out[j].Peer })
	return out
}

// stalled says what each provider of the fetch of root did while it
// stalled: answered DONT_HAVE for a block (its household no longer
// serves the file as it was: it changed or left the library there), is
// no longer connected, or sent nothing.
func (x *Exchange) stalled(root cid.Cid, ps []peer.ID) string {
	refused := x.track.refusedBlocks(root)
	var parts []string
	for _, p := range ps {
		switch cs := refused[p]; {
		case len(cs) > 0:
			more := ""
			if len(cs) > 1 {
				more = fmt.Sprintf(" and %d more", len(cs)-1)
			}
			parts = append(parts, fmt.Sprintf("%s answered that it does not have block %s%s of the file (the file changed or left the library there)", shortPeer(p.String()), cs[0], more))
		case x.cfg.Host.Network().Connectedness(p) != network.Connected:
			parts = append(parts, fmt.Sprintf("%s is no longer connected", shortPeer(p.String())))
		default:
			parts = append(parts, fmt.Sprintf("%s sent nothing", shortPeer(p.String())))
		}
	}
	if len(parts) == 0 {
		return "no provider to ask"
	}
	return strings.Join(parts, "; ")
}

// IsUnavailable reports an *UnavailableError.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}
