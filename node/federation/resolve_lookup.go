package federation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// errDistrusted is why a peer whose lie was disproved gave no record.
var errDistrusted = errors.New("not asked: its bytes disproved a record it signed")

// answer is a verified record and the peer that sent it.
type answer struct {
	from peer.ID
	rec  protocol.Record
}

// lookupRun is one federated lookup of a CID: the peers the DHT's walk
// named, those asked and settled, and the answers, shared by the
// goroutines that ask them (its mutex guards the maps and providers).
type lookupRun struct {
	r   *resolver
	c   string
	ctx context.Context
	// replace is a stale root known only from peers, dropped before the
	// first answer is merged ("" once it is, or when there is none).
	replace store.RootID

	// answers carries each verified record; closed once every asker is
	// done.
	answers chan answer
	// changed says that a peer was settled or named a provider.
	changed chan struct{}
	// walked is closed once the DHT's walk is over.
	walked chan struct{}
	askers sync.WaitGroup
	cut    atomic.Int64 // answers a relay broke off

	mu        sync.Mutex
	providers []string         // the walk's, as the answer names them
	named     map[peer.ID]bool // the same, for the checks
	asked     map[peer.ID]bool
	settled   map[peer.ID]bool  // asked, and its answer (if any) sent on answers
	why       map[peer.ID]error // why a peer asked gave no record
}

// federated asks the network for c within the lookup timeout: the
// walk's providers and the fan-out (start), the answer chosen (choice)
// and merged, else the miss.
func (r *resolver) federated(c string, replace store.RootID) (model.Document, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	id, err := cid.Decode(c)
	if err != nil {
		return model.Document{}, fmt.Errorf("%w: %v", model.ErrBadRequest, err)
	}
	l := &lookupRun{r: r, c: c, ctx: ctx, replace: replace,
		answers: make(chan answer, lookupFanout), changed: make(chan struct{}, 1), walked: make(chan struct{}),
		named: map[peer.ID]bool{}, asked: map[peer.ID]bool{}, settled: map[peer.ID]bool{}, why: map[peer.ID]error{}}
	l.start(id)
	ch := &choice{l: l, walked: l.walked}
	refused := 0 // answers whose records link local files of different content
	for {
		a, ok := ch.next()
		if !ok {
			return model.Document{}, l.miss(refused)
		}
		doc, merged, conflict := l.merge(a)
		if conflict {
			refused++
		}
		if !merged {
			continue
		}
		cancel() // the others may stop
		if slices.Contains(doc.CIDs, c) {
			// The merge answers with the document it wrote.
			return r.present(doc, c), nil
		}
		d, _, err := r.fromStore(context.Background(), c)
		return d, err
	}
}

// start asks the walk's providers and the fan-out's peers; answers is
// closed once all of them are done.
func (l *lookupRun) start(id cid.Cid) {
	l.askers.Add(1)
	go l.askProviders(id)
	l.fanOut()
	go func() { l.askers.Wait(); close(l.answers) }()
}

// askProviders asks each provider of the CID the moment the DHT's walk
// names it, each at once (at most maxProviders): they hold the file, and
// the fan-out's peers most likely do not, so none of them waits behind
// the fan-out. walked is closed when the walk is over.
func (l *lookupRun) askProviders(id cid.Cid) {
	defer l.askers.Done()
	defer close(l.walked)
	self := l.r.net.self()
	for p := range l.r.net.providers(l.ctx, id, maxProviders) {
		if p == self {
			continue
		}
		l.name(p)
		l.askers.Add(1)
		go func() {
			defer l.askers.Done()
			l.ask(p)
		}()
	}
}

// name counts p among the walk's providers.
func (l *lookupRun) name(p peer.ID) {
	l.mu.Lock()
	l.providers = append(l.providers, p.String())
	l.named[p] = true
	l.mu.Unlock()
	l.poke() // a held answer may be this provider's
}

// fanOut asks lookupFanout peers at once, in fanOutOrder; a worker stops
// at its first answer.
func (l *lookupRun) fanOut() {
	cands := make(chan peer.ID, 64)
	l.askers.Add(1)
	go func() {
		defer l.askers.Done()
		defer close(cands)
		for _, p := range l.fanOutOrder() {
			select {
			case cands <- p:
			case <-l.ctx.Done():
				return
			}
		}
	}()
	for range lookupFanout {
		l.askers.Add(1)
		go func() {
			defer l.askers.Done()
			for p := range cands {
				if l.ask(p) {
					return
				}
			}
		}()
	}
}

// fanOutOrder is whom the fan-out asks: the connected peers, then the
// routing table's (it finds a file by its other CIDs, which have no
// provider records), each in an order no peer can choose, those that
// hung or lied last; never this household.
func (l *lookupRun) fanOutOrder() []peer.ID {
	s, self := l.r.scores, l.r.net.self()
	order := append(s.order(l.r.net.connected()), s.order(l.r.net.routingTable())...)
	return slices.DeleteFunc(order, func(p peer.ID) bool { return p == self })
}

// ask asks p for c's record, unless it was asked already, and sends a
// verified one on answers; true when p answered with one. A peer whose
// bytes disproved a record it signed is not asked: not believed.
func (l *lookupRun) ask(p peer.ID) bool {
	if !l.claim(p) {
		return false
	}
	defer l.settle(p)
	if l.r.scores.distrusted(p) {
		l.failed(p, errDistrusted)
		return false
	}
	rec, err := l.r.net.fetch(l.ctx, p, l.c)
	if err != nil {
		l.failed(p, err)
		return false
	}
	select {
	case l.answers <- answer{p, rec}:
	case <-l.ctx.Done():
	}
	return true
}

// claim counts p asked; false when it was already.
func (l *lookupRun) claim(p peer.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.asked[p] {
		return false
	}
	l.asked[p] = true
	return true
}

// settle counts p's ask over (its answer, if any, on answers).
func (l *lookupRun) settle(p peer.ID) {
	l.mu.Lock()
	l.settled[p] = true
	l.mu.Unlock()
	l.poke()
}

// poke tells the choice that a peer was settled or named.
func (l *lookupRun) poke() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// failed keeps and logs why p gave no record: a relay that cut it off
// (counted, the miss tells it), or at debug anything but "no such
// file"; nothing once the lookup is over.
func (l *lookupRun) failed(p peer.ID, err error) {
	l.mu.Lock()
	l.why[p] = err
	l.mu.Unlock()
	switch {
	case errors.Is(err, errRelayCut) && l.ctx.Err() == nil:
		l.cut.Add(1)
		l.r.log.Info("a peer's record did not come through its relay", "peer", p, "cid", l.c, "err", err)
	case !errors.Is(err, errNoRecord) && l.ctx.Err() == nil:
		l.r.log.Debug("peer gave no usable record", "peer", p, "cid", l.c, "err", err)
	}
}

// isProvider reports whether the walk named p.
func (l *lookupRun) isProvider(p peer.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.named[p]
}

// providersSettled reports whether every provider the walk named so far
// was asked and is done.
func (l *lookupRun) providersSettled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.named {
		if !l.settled[p] {
			return false
		}
	}
	return true
}

// merge merges a's record into the store (after dropping the stale root
// it replaces), remembers who answered, and returns the document the
// merge left; merged false when the store did not take it, conflict when
// that is because the record pairs local files whose bytes differ.
func (l *lookupRun) merge(a answer) (doc store.Document, merged, conflict bool) {
	if l.replace != "" {
		// The stale record goes; the fresh one takes its place.
		if err := l.r.st.DeleteRoot(l.ctx, l.replace); err != nil && !errors.Is(err, store.ErrNotFound) {
			l.r.log.Warn("cannot drop a stale peer record", "cid", l.c, "err", err)
		}
		l.replace = ""
	}
	res, err := l.r.st.MergeRecord(l.ctx, a.from.String(), a.rec.CIDs, a.rec.Meta)
	if err != nil {
		l.r.log.Warn("cannot merge a peer's record", "peer", a.from, "cid", l.c, "err", err)
		return store.Document{}, false, false
	}
	if res.Conflict {
		return store.Document{}, false, true
	}
	l.r.rememberSource(a.rec.CID, source{peer: a.from, providers: l.answerProviders(a.from)})
	return res.Document, true, false
}

// answerProviders are the providers an answer from p names: the walk's
// and p, sorted.
func (l *lookupRun) answerProviders(p peer.ID) []string {
	l.mu.Lock()
	provs := append([]string{}, l.providers...)
	l.mu.Unlock()
	if !slices.Contains(provs, p.String()) {
		provs = append(provs, p.String())
	}
	sort.Strings(provs)
	return provs
}

// miss is the error of a lookup no answer of which was merged: how many
// peers were asked, and why answers were refused or cut off. One line is
// logged per miss (a miss is remembered for a few seconds): a household
// whose relay is down sees its relayed lookups fail here.
func (l *lookupRun) miss(refused int) error {
	l.mu.Lock()
	n, found := len(l.asked), len(l.providers)
	prov := l.providersMissed()
	l.mu.Unlock()
	why := ""
	if refused > 0 {
		why = fmt.Sprintf(" (%d answered with a record this node refused: it pairs files held here whose bytes differ)", refused)
	}
	if cut := l.cut.Load(); cut > 0 {
		why += fmt.Sprintf(" (%d answered over a relay that cut the record off: a relayed connection carries at most 128 KiB each way; it comes through once the connection is direct)", cut)
	}
	err := fmt.Errorf("%w: no file with CID %s here or on the %d peers asked%s%s", model.ErrNotFound, l.c, n, why, prov)
	if l.ctx.Err() != nil && why == "" {
		err = fmt.Errorf("%w: no file with CID %s here, and none of the %d peers asked had it within %s%s", model.ErrNotFound, l.c, n, l.r.timeout, prov)
	}
	l.r.log.Info("lookup: no peer answered with the file", "cid", l.c, "asked", n, "providers", found, "err", err)
	return err
}

// providersMissed says what became of the providers the walk named, for
// a miss: none named (the DHT holds no record of the file where this
// household looked), or each one's failure, at most three told. l.mu is
// held.
func (l *lookupRun) providersMissed() string {
	if len(l.named) == 0 {
		return " (the DHT named no household providing it)"
	}
	var told []string
	for _, p := range l.providers {
		id, _ := peer.Decode(p)
		what := "asked, no answer yet"
		switch err, ok := l.why[id]; {
		case !l.asked[id]:
			what = "not asked"
		case ok:
			what = err.Error()
		}
		if len(told) < 3 {
			told = append(told, fmt.Sprintf("%s: %s", p, what))
		}
	}
	more := ""
	if len(l.named) > len(told) {
		more = fmt.Sprintf("; %d more", len(l.named)-len(told))
	}
	households := "households"
	if len(l.named) == 1 {
		households = "household"
	}
	return fmt.Sprintf(" (the DHT named %d %s providing it, none gave its record: %s%s)", len(l.named), households, strings.Join(told, "; "), more)
}
