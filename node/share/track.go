package share

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bsmsg "github.com/ipfs/boxo/bitswap/message"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
)

// tracker follows bitswap's messages (its tracer): it logs each peer's
// fetch of a file served here, from its first block to its last, and
// remembers what the providers of the node's own fetches answered.
type tracker struct {
	log *slog.Logger

	// What went to peers and came from them, as blocks in bitswap
	// messages (Stats).
	servedBytes, servedBlocks   atomic.Int64
	fetchedBytes, fetchedBlocks atomic.Int64

	mu       sync.Mutex
	recent   map[string]servedBlock // block multihash → its file, as just read for a peer
	sessions map[sessionKey]*session
	fetches  map[string]*fetchState // root multihash → the node's fetch of it
}

type servedBlock struct {
	root cid.Cid
	name string
	at   time.Time
}

type sessionKey struct {
	peer peer.ID
	root string
}

type session struct {
	root        cid.Cid
	name        string
	start, last time.Time
	bytes       int64
	blocks      int
}

// fetchState is one of the node's fetches: who may have the file and
// what they said of its root.
type fetchState struct {
	n         int // fetches of this root running
	providers []peer.ID
	said      map[peer.ID]bool // true: HAVE (or the block), false: DONT_HAVE
	// refused is, by provider, the blocks it answered DONT_HAVE for
	// that no provider sent since (why a fetch stalls), at most
	// maxRefused each.
	refused map[peer.ID][]cid.Cid
}

// maxRefused bounds the refused blocks kept a provider.
const maxRefused = 16

// sessionIdle ends a peer's fetch in the log: no block of the file went
// to the peer for this long.
const sessionIdle = 10 * time.Second

func newTracker(log *slog.Logger) *tracker {
	return &tracker{log: log, recent: map[string]servedBlock{}, sessions: map[sessionKey]*session{}, fetches: map[string]*fetchState{}}
}

// served notes that block c of root's file was read for a peer.
func (t *tracker) served(c, root cid.Cid, name string) {
	t.mu.Lock()
	t.recent[string(c.Hash())] = servedBlock{root: root, name: name, at: time.Now()}
	t.mu.Unlock()
}

// MessageSent counts the blocks that went to p, by file.
func (t *tracker) MessageSent(p peer.ID, msg bsmsg.BitSwapMessage) {
	bls := msg.Blocks()
	if len(bls) == 0 {
		return
	}
	for _, b := range bls {
		t.servedBytes.Add(int64(len(b.RawData())))
	}
	t.servedBlocks.Add(int64(len(bls)))
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range bls {
		sb, ok := t.recent[string(b.Cid().Hash())]
		if !ok {
			continue
		}
		k := sessionKey{p, string(sb.root.Hash())}
		s, ok := t.sessions[k]
		if !ok {
			s = &session{root: sb.root, name: sb.name, start: now}
			t.sessions[k] = s
			t.log.Info("share: a peer started fetching a file", "peer", p.String(), "file", sb.name, "cid", sb.root.String())
		}
		s.last = now
		s.bytes += int64(len(b.RawData()))
		s.blocks++
	}
}

// MessageReceived notes what the providers of a running fetch said of
// its root.
func (t *tracker) MessageReceived(p peer.ID, msg bsmsg.BitSwapMessage) {
	for _, b := range msg.Blocks() {
		t.fetchedBytes.Add(int64(len(b.RawData())))
		t.fetchedBlocks.Add(1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fetches) == 0 {
		return
	}
	for _, f := range t.fetches {
		for q, cs := range f.refused {
			for _, b := range msg.Blocks() {
				cs = slices.DeleteFunc(cs, func(c cid.Cid) bool { return c.Equals(b.Cid()) })
			}
			f.refused[q] = cs
		}
		if !containsPeer(f.providers, p) {
			continue
		}
		for _, c := range msg.DontHaves() {
			if cs := f.refused[p]; len(cs) < maxRefused && !slices.ContainsFunc(cs, c.Equals) {
				f.refused[p] = append(cs, c)
			}
		}
	}
	for _, c := range msg.DontHaves() {
		if f, ok := t.fetches[string(c.Hash())]; ok {
			f.said[p] = false
		}
	}
	for _, c := range msg.Haves() {
		if f, ok := t.fetches[string(c.Hash())]; ok {
			f.said[p] = true
		}
	}
	for _, b := range msg.Blocks() {
		if f, ok := t.fetches[string(b.Cid().Hash())]; ok {
			f.said[p] = true
		}
	}
}

// fetch registers the node's fetch of root from providers; done ends it.
func (t *tracker) fetch(root cid.Cid, providers []peer.ID) (done func()) {
	k := string(root.Hash())
	t.mu.Lock()
	f, ok := t.fetches[k]
	if !ok {
		f = &fetchState{said: map[peer.ID]bool{}, refused: map[peer.ID][]cid.Cid{}}
		t.fetches[k] = f
	}
	f.n++
	for _, p := range providers {
		if !containsPeer(f.providers, p) {
			f.providers = append(f.providers, p)
		}
	}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if f.n--; f.n == 0 {
			delete(t.fetches, k)
		}
	}
}

// answers is what each provider said of root so far (HAVE true,
// DONT_HAVE false; absent: nothing).
func (t *tracker) answers(root cid.Cid) map[peer.ID]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[peer.ID]bool{}
	if f, ok := t.fetches[string(root.Hash())]; ok {
		for p, v := range f.said {
			out[p] = v
		}
	}
	return out
}

// refusedBlocks is, by provider of the fetch of root, the blocks it
// answered DONT_HAVE for that no provider sent since.
func (t *tracker) refusedBlocks(root cid.Cid) map[peer.ID][]cid.Cid {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[peer.ID][]cid.Cid{}
	if f, ok := t.fetches[string(root.Hash())]; ok {
		for p, cs := range f.refused {
			if len(cs) > 0 {
				out[p] = slices.Clone(cs)
			}
		}
	}
	return out
}

// providers are the providers of every running fetch.
func (t *tracker) providers() []peer.ID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []peer.ID
	for _, f := range t.fetches {
		for _, p := range f.providers {
			if !containsPeer(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func containsPeer(list []peer.ID, p peer.ID) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// run ends idle sessions in the log and forgets old reads until ctx
// ends, then ends every session.
func (t *tracker) run(ctx context.Context) {
	tick := time.NewTicker(sessionIdle / 5)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			t.end(time.Time{})
			return
		case <-tick.C:
			t.end(time.Now().Add(-sessionIdle))
		}
	}
}

// end logs and forgets the sessions idle since before (all of them when
// before is zero).
func (t *tracker) end(before time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, s := range t.sessions {
		if before.IsZero() || s.last.Before(before) {
			delete(t.sessions, k)
			t.log.Info("share: a peer finished fetching a file", "peer", k.peer.String(), "file", s.name, "cid", s.root.String(),
				"bytes", s.bytes, "blocks", s.blocks, "took", s.last.Sub(s.start).Round(time.Millisecond).String())
		}
	}
	for k, sb := range t.recent {
		if before.IsZero() || sb.at.Before(before) {
			delete(t.recent, k)
		}
	}
}

// finder is bitswap's provider search: the providers of the node's
// running fetches (the file's providers are known before a fetch
// starts: its record's peers and the DHT's providers of its canonical
// CID, which is not the CID of any block).
type finder struct {
	t *tracker
	h host.Host
}

func (f finder) FindProvidersAsync(ctx context.Context, _ cid.Cid, n int) <-chan peer.AddrInfo {
	ps := f.t.providers()
	ch := make(chan peer.AddrInfo, len(ps))
	for i, p := range ps {
		if n > 0 && i >= n {
			break
		}
		ch <- peer.AddrInfo{ID: p, Addrs: f.h.Peerstore().Addrs(p)}
	}
	close(ch)
	return ch
}
