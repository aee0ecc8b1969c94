package announce

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	pb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/metamesh/node/model"
)

// ledger is what the household knows of its keys' findability: for every
// key of the keystore, when an ADD_PROVIDER for it was last accepted by a
// peer, and the latest findability check of each region. It holds the
// keystore's keys and no other (the Sweeper keeps it in step with every
// keystore write and reads the keystore again at every check), so it is
// bounded by the keystore.
type ledger struct {
	mu     sync.Mutex
	keys   map[string]*keyState // by multihash bytes
	checks []check              // the latest of each region, at most one per key
	last   time.Time            // the latest check
	done   int64                // checks since start
}

// keyState is one key's keyspace position and last provide.
type keyState struct {
	bits uint64    // the first 64 bits of its keyspace key
	last time.Time // its last accepted ADD_PROVIDER; zero: none since start
}

// check is one findability check: key was looked up at at, closest peers
// were the closest to it, holding of them returned the household among
// its providers.
type check struct {
	key              string
	bits             uint64
	at               time.Time
	closest, holding int
}

func newLedger() *ledger { return &ledger{keys: map[string]*keyState{}} }

// maxPrefix caps the region prefix length: the first 64 bits of a key
// are kept (a federation whose regions are longer than that does not
// exist).
const maxPrefix = 64

// keyBits is the first 64 bits of k's keyspace key, kad-dht's: SHA-256 of
// the multihash bytes (kbucket.ConvertKey).
func keyBits(k string) uint64 {
	sum := sha256.Sum256([]byte(k))
	return binary.BigEndian.Uint64(sum[:8])
}

// prefixLen is the region prefix length for the provider's mean prefix
// length: rounded down, at least 0 (-1 while it has not measured).
func prefixLen(avg float64) int {
	return min(max(int(math.Floor(avg)), 0), maxPrefix)
}

// inRegion says whether bits start with the first l bits of prefix.
func inRegion(bits, prefix uint64, l int) bool {
	return l == 0 || bits>>(64-l) == prefix>>(64-l)
}

// prefixString writes the first l bits of bits: "0110".
func prefixString(bits uint64, l int) string {
	var b strings.Builder
	for i := range l {
		b.WriteByte('0' + byte(bits>>(63-i)&1))
	}
	return b.String()
}

// set makes keys the ledger's keys: those it had keep their last provide,
// the others and their checks go.
func (l *ledger) set(keys []mh.Multihash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.keys
	l.keys = make(map[string]*keyState, len(keys))
	for _, k := range keys {
		if st := was[string(k)]; st != nil {
			l.keys[string(k)] = st
		} else {
			l.keys[string(k)] = &keyState{bits: keyBits(string(k))}
		}
	}
	l.pruneChecks()
}

// add adds the keys the ledger lacks.
func (l *ledger) add(keys ...mh.Multihash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if l.keys[string(k)] == nil {
			l.keys[string(k)] = &keyState{bits: keyBits(string(k))}
		}
	}
}

// drop removes keys and their checks.
func (l *ledger) drop(keys ...mh.Multihash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.keys, string(k))
	}
	l.pruneChecks()
}

// pruneChecks drops the checks of keys the ledger no longer holds; l.mu
// held.
func (l *ledger) pruneChecks() {
	l.checks = slices.DeleteFunc(l.checks, func(c check) bool { return l.keys[c.key] == nil })
}

// provided notes that a peer accepted an ADD_PROVIDER for k at t; a key
// that is not the keystore's is not noted.
func (l *ledger) provided(k []byte, t time.Time) {
	l.mu.Lock()
	if st := l.keys[string(k)]; st != nil && t.After(st.last) {
		st.last = t
	}
	l.mu.Unlock()
}

// next picks the key to check at prefix length pl: a random key of the
// region next in rotation (one not checked yet at pl, else the one
// checked longest ago; the first by prefix among equals). ok is false
// when the ledger holds no key.
func (l *ledger) next(pl int) (key string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pick uint64
	var pickAt time.Time
	for _, r := range l.regionsLocked(pl) {
		at := l.checkOf(r.bits, pl).at
		if !ok || at.Before(pickAt) {
			pick, pickAt, ok = r.bits, at, true
		}
	}
	if !ok {
		return "", false
	}
	n := 0
	for k, st := range l.keys {
		if inRegion(st.bits, pick, pl) {
			// Reservoir sampling: each key of the region with chance 1/n.
			if n++; rand.IntN(n) == 0 {
				key = k
			}
		}
	}
	return key, true
}

// checked keeps c as its region's latest check at prefix length pl (the
// region's earlier checks go).
func (l *ledger) checked(c check, pl int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	l.last = c.at
	if l.keys[c.key] == nil {
		return // it left the keystore meanwhile
	}
	l.checks = slices.DeleteFunc(l.checks, func(o check) bool { return inRegion(o.bits, c.bits, pl) })
	l.checks = append(l.checks, c)
}

// checkOf is the latest check of a key of the region of bits at prefix
// length pl; zero when there is none. l.mu held.
func (l *ledger) checkOf(bits uint64, pl int) check {
	var out check
	for _, c := range l.checks {
		if inRegion(c.bits, bits, pl) && c.at.After(out.at) {
			out = c
		}
	}
	return out
}

// region is one region's keys: bits holds its prefix (the first l bits).
type region struct {
	bits           uint64
	keys           int
	oldest, newest time.Time
	unprovided     bool // a key of it was not provided since start
}

// regionsLocked groups the keys by their first pl bits, in prefix order;
// l.mu held.
func (l *ledger) regionsLocked(pl int) []region {
	by := map[uint64]*region{}
	for _, st := range l.keys {
		p := uint64(0)
		if pl > 0 {
			p = st.bits >> (64 - pl) << (64 - pl)
		}
		r := by[p]
		if r == nil {
			r = &region{bits: p}
			by[p] = r
		}
		r.keys++
		switch {
		case st.last.IsZero():
			r.unprovided = true
		case r.oldest.IsZero() || st.last.Before(r.oldest):
			r.oldest = st.last
		}
		if st.last.After(r.newest) {
			r.newest = st.last
		}
	}
	out := make([]region, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b region) int {
		switch {
		case a.bits < b.bits:
			return -1
		case a.bits > b.bits:
			return 1
		}
		return 0
	})
	return out
}

// report gives the regions at the provider's mean prefix length avg
// (rounded down), each with its latest check, and the checks summed.
func (l *ledger) report(avg float64) ([]model.ProvidedRegion, model.Findable) {
	pl := prefixLen(avg)
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := l.regionsLocked(pl)
	out := make([]model.ProvidedRegion, 0, len(rs))
	f := model.Findable{CheckedAt: l.last, Checks: l.done}
	for _, r := range rs {
		pr := model.ProvidedRegion{Prefix: prefixString(r.bits, pl), Keys: r.keys, NewestProvidedAt: r.newest}
		if !r.unprovided {
			pr.LastProvidedAt = r.oldest
		}
		if c := l.checkOf(r.bits, pl); !c.at.IsZero() {
			pr.CheckedKey, pr.CheckedAt = mh.Multihash(c.key).B58String(), c.at
			pr.Closest, pr.Holding = c.closest, c.holding
			f.Regions++
			f.Closest += c.closest
			f.Holding += c.holding
		}
		out = append(out, pr)
	}
	return out, f
}

// provideRecorder notes in the ledger every ADD_PROVIDER a peer accepted
// (sent without error) through the provider's message sender.
type provideRecorder struct {
	pb.MessageSender
	l *ledger
}

func (r provideRecorder) SendMessage(ctx context.Context, p peer.ID, pmes *pb.Message) error {
	err := r.MessageSender.SendMessage(ctx, p, pmes)
	if err == nil && pmes.GetType() == pb.Message_ADD_PROVIDER {
		r.l.provided(pmes.GetKey(), time.Now())
	}
	return err
}
