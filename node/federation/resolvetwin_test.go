package federation

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// twinNet is the resolver's network in memory (lookupNet): households
// the test makes, who the DHT's walk names and when it ends, who is
// connected and in the routing table, and what each household answers
// and when. Nothing happens by the clock: a walk names a provider when
// the test sends it, a household answers when the test releases its
// reply, so the order of events is the test's.
type twinNet struct {
	t  *testing.T
	me peer.ID
	// walks hands the test each lookup's walk as it starts: the test
	// names providers on it and closes it when the walk is over.
	walks chan chan<- peer.ID

	mu    sync.Mutex
	conns []peer.ID
	table []peer.ID
	homes map[peer.ID]*twinHousehold
}

// twinHousehold is one household of the twin: its key (its records are
// sealed and opened as on the wire) and its replies, released by the
// test.
type twinHousehold struct {
	name string
	id   peer.ID
	key  crypto.PrivKey
	// replies are what its next asks get, in order; an ask with none
	// waits for one (or for the lookup's end: it hangs).
	replies chan twinReply
	// asked tells of each ask as it comes; asks counts them, and
	// abandoned those the lookup's end cut short.
	asked     chan struct{}
	asks      atomic.Int64
	abandoned atomic.Int64
}

// twinReply is one answer of a household: a sealed record, or an error.
type twinReply struct {
	env []byte
	err error
}

func newTwinNet(t *testing.T) *twinNet {
	t.Helper()
	me, err := peer.IDFromPrivateKey(anyKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return &twinNet{t: t, me: me, walks: make(chan chan<- peer.ID, 4), homes: map[peer.ID]*twinHousehold{}}
}

// household adds a household named name (for messages) to the twin.
func (n *twinNet) household(t *testing.T, name string) *twinHousehold {
	t.Helper()
	key := anyKey(t)
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	h := &twinHousehold{name: name, id: id, key: key, replies: make(chan twinReply, 8), asked: make(chan struct{}, 16)}
	n.mu.Lock()
	n.homes[id] = h
	n.mu.Unlock()
	return h
}

// connect makes hs connected peers; route puts them in the routing table.
func (n *twinNet) connect(hs ...*twinHousehold) { n.add(&n.conns, ids(hs)...) }
func (n *twinNet) route(hs ...*twinHousehold)   { n.add(&n.table, ids(hs)...) }

// add appends ps to the twin's list to (conns or table).
func (n *twinNet) add(to *[]peer.ID, ps ...peer.ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	*to = append(*to, ps...)
}

func ids(hs []*twinHousehold) []peer.ID {
	out := make([]peer.ID, len(hs))
	for i, h := range hs {
		out[i] = h.id
	}
	return out
}

func (n *twinNet) self() peer.ID { return n.me }

func (n *twinNet) connected() []peer.ID {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.conns)
}

func (n *twinNet) routingTable() []peer.ID {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.table)
}

// providers hands the walk's script to the test and names what the test
// sends on it, until the test closes it or ctx ends.
func (n *twinNet) providers(ctx context.Context, _ cid.Cid, _ int) <-chan peer.ID {
	script, out := make(chan peer.ID), make(chan peer.ID)
	n.walks <- script
	go func() {
		defer close(out)
		for {
			select {
			case p, ok := <-script:
				if !ok {
					return
				}
				select {
				case out <- p:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// fetch waits for the household's next reply (or the lookup's end) and
// opens it as recordService.fetch does.
func (n *twinNet) fetch(ctx context.Context, p peer.ID, c string) (protocol.Record, error) {
	n.mu.Lock()
	h := n.homes[p]
	n.mu.Unlock()
	if h == nil {
		n.t.Errorf("asked %s, which is no household of the twin (this household is %s)", p, n.me)
		return protocol.Record{}, errNoRecord
	}
	h.asks.Add(1)
	h.asked <- struct{}{}
	select {
	case r := <-h.replies:
		if r.err != nil {
			return protocol.Record{}, r.err
		}
		return protocol.OpenRecord(r.env, p, c)
	case <-ctx.Done():
		h.abandoned.Add(1)
		return protocol.Record{}, ctx.Err()
	}
}

// twinFile is a file of the twin: its CIDs (a sha2-256 and a midhash
// one) and the canonical one a lookup asks by.
type twinFile struct {
	cids      []string
	canonical string
}

func newTwinFile(t *testing.T, title string) twinFile {
	t.Helper()
	sum := sha256.Sum256([]byte(title))
	sha, err := protocol.SHA256CID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	mid, err := protocol.MidhashCID(sum[:])
	if err != nil {
		t.Fatal(err)
	}
	f := twinFile{cids: []string{sha.String(), mid.String()}}
	f.canonical = protocol.Canonical(f.cids)
	return f
}

// record releases h's record of f, titled after h and signed by h;
// extra CIDs pair f with other bytes (a lie).
func (h *twinHousehold) record(t *testing.T, f twinFile, extra ...string) {
	t.Helper()
	h.replies <- twinReply{env: h.sealed(t, f, extra...)}
}

// sealed is h's signed record of f (and extra CIDs).
func (h *twinHousehold) sealed(t *testing.T, f twinFile, extra ...string) []byte {
	t.Helper()
	rec, err := protocol.NewRecord(append(slices.Clone(f.cids), extra...), map[string]string{"title": "as " + h.name + " has it"}, h.id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env, err := protocol.SealRecord(rec, h.key)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// passOn releases, as h's answer, the record of f another household
// signed: it does not verify (the signer is not who answered).
func (h *twinHousehold) passOn(t *testing.T, f twinFile, signer *twinHousehold) {
	t.Helper()
	h.replies <- twinReply{env: signer.sealed(t, f)}
}

// fail releases an error for h's next ask (errNoRecord: no such file).
func (h *twinHousehold) fail(err error) { h.replies <- twinReply{err: err} }

// waitAsked waits for h's next ask.
func (h *twinHousehold) waitAsked(t *testing.T) {
	t.Helper()
	waiting.Recv(t, h.asked, h.name+" to be asked")
}

// twinScene is a resolver on a twin network and a real store
// (redis-server): the test's household.
type twinScene struct {
	tw *twinNet
	r  *resolver
	st *store.Store
	// early has the error of a lookup that failed other than by a miss
	// (a store error, say): a walk waited for then fails with it.
	early chan lookupResult
}

// newTwinScene is a resolver on a new twin: lookups end at timeout, a
// fan-out record waits hold at most for the providers'.
func newTwinScene(t *testing.T, timeout, hold time.Duration) *twinScene {
	t.Helper()
	st := storetest.New(t)
	r := newResolver(st, nil, nil, timeout, slog.New(slog.DiscardHandler))
	tw := newTwinNet(t)
	r.net, r.holdFor = tw, hold
	return &twinScene{tw: tw, r: r, st: st, early: make(chan lookupResult, 4)}
}

// lookupResult is what a lookup answered.
type lookupResult struct {
	doc model.Document
	err error
}

// lookup starts a lookup of c as GET /api/meta/<c> does for a loopback
// client; its answer comes on the channel.
func (s *twinScene) lookup(t *testing.T, c string) <-chan lookupResult {
	t.Helper()
	out := make(chan lookupResult, 1)
	ctx := waiting.Context(t)
	go func() {
		doc, err := s.r.Meta(ctx, c, false, nil)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			select {
			case s.early <- lookupResult{doc, err}:
			default:
			}
		}
		out <- lookupResult{doc, err}
	}()
	return out
}

// walk is the walk of the lookup that started; a lookup that failed
// other than by a miss fails the test with its error.
func (s *twinScene) walk(t *testing.T) chan<- peer.ID {
	t.Helper()
	select {
	case w := <-s.tw.walks:
		return w
	case r := <-s.early:
		t.Fatalf("waiting for a lookup's walk, the lookup failed: %v", r.err)
	case <-waiting.After():
		t.Fatalf("waited %v for a lookup's walk", waiting.Guard)
	}
	return nil
}

// walkNames has the walk name h as a provider.
func walkNames(t *testing.T, walk chan<- peer.ID, h *twinHousehold) {
	t.Helper()
	walkNamesID(t, walk, h.id)
}

// walkNamesID has the walk name p as a provider.
func walkNamesID(t *testing.T, walk chan<- peer.ID, p peer.ID) {
	t.Helper()
	select {
	case walk <- p:
	case <-waiting.After():
		t.Fatalf("the walk could not name %s", p)
	}
}

// answered waits for the lookup's answer.
func answered(t *testing.T, res <-chan lookupResult) lookupResult {
	t.Helper()
	r, _ := waiting.Recv(t, res, "the lookup's answer")
	return r
}

// wantSource checks that the lookup answered with want's record.
func wantSource(t *testing.T, got lookupResult, want *twinHousehold, hs ...*twinHousehold) {
	t.Helper()
	if got.err != nil {
		t.Fatalf("lookup: %v; want %s's record", got.err, want.name)
	}
	if got.doc.Source != want.id.String() {
		from := got.doc.Source
		for _, h := range hs {
			if h.id.String() == from {
				from = h.name
			}
		}
		t.Fatalf("the lookup answered with %s's record; want %s's", from, want.name)
	}
}
