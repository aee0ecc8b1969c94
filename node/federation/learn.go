package federation

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/store"
)

// The learner's pace and memory (HouseholdConfig.LearnInterval and
// LearnIdleInterval take the first two when zero).
const (
	// DefaultLearnInterval is the time between two files asked of peers
	// while the node is busy (a scan, a user's lookups): 4 a minute.
	DefaultLearnInterval = 15 * time.Second
	// DefaultLearnIdleInterval is the same at idle: 20 a minute.
	DefaultLearnIdleInterval = 3 * time.Second
	// learnAgainAfter is how long a file some household answered for is
	// left before it is asked again.
	learnAgainAfter = 7 * 24 * time.Hour
	// learnMissAgainAfter is how long a file no household answered for
	// is left, unless a household the node never saw connects first.
	learnMissAgainAfter = time.Hour
	// learnRetryAfter is how soon a file is asked again when a household
	// asked about it did not answer (a timeout on a busy machine, a
	// stream cut): once, so that one household's silence does not leave
	// the others' vote without it for a week.
	learnRetryAfter = time.Minute
	// learnProviders is how many of a file's providers are asked; with
	// none found, as many of the connected peers.
	learnProviders = 8
	// learnReadsPerTick bounds the documents read to find the next file
	// to ask for.
	learnReadsPerTick = 64
)

// wanted are the fields whose absence (or only the file name's guess
// of it) makes a local video worth asking peers about: a file that has
// them all is never asked.
var wanted = []string{"titles/eng", "plot/", "imdbid", store.PosterField}

// learner asks the households that provide a local file's canonical CID
// for their records of it, in the background at a bounded pace, and
// merges them (origin/<peer>/…): what they know the household shows
// where it has nothing of its own (store.Document.Shown). It runs on one
// goroutine (run); its maps are that goroutine's.
type learner struct {
	st              *store.Store
	net             lookupNet
	scores          *scores
	log             *slog.Logger
	interval, idle  time.Duration
	busy            func() bool
	private         func(path string) bool // nil: none is; a private file is never asked about
	timeout         time.Duration
	queue           []store.RootID
	next            map[store.RootID]time.Time // when each root asked may be asked again
	missed          map[store.RootID]int       // roots no household answered for: the peers seen when asked
	retried         map[store.RootID]bool      // roots asked again after a household's silence
	seen            map[peer.ID]bool           // every peer seen connected
	asked, answered atomic.Int64
	requests        atomic.Int64 // record requests sent
}

// run asks one file per tick until ctx ends.
func (l *learner) run(ctx context.Context) {
	t := time.NewTimer(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range l.net.connected() {
			l.seen[p] = true
		}
		l.tick(ctx)
		d := l.interval
		if l.busy == nil || !l.busy() {
			d = l.idle
		}
		t.Reset(d)
	}
}

// tick finds the next local file worth asking about and asks for it.
func (l *learner) tick(ctx context.Context) {
	now := time.Now()
	for range learnReadsPerTick {
		if len(l.queue) == 0 {
			roots, err := l.st.RootIDs(ctx)
			if err != nil {
				return
			}
			rand.Shuffle(len(roots), func(i, j int) { roots[i], roots[j] = roots[j], roots[i] })
			l.queue = roots
			if len(roots) == 0 {
				return
			}
		}
		root := l.queue[0]
		l.queue = l.queue[1:]
		if n, ok := l.missed[root]; ok && n < len(l.seen) {
			delete(l.next, root) // a household not seen before may have it
		}
		if until, ok := l.next[root]; ok && now.Before(until) {
			continue
		}
		d, err := l.st.Document(ctx, root)
		if err != nil || !worthAsking(d) || (l.private != nil && l.private(d.FilePath())) {
			continue
		}
		l.ask(ctx, d)
		return
	}
}

// worthAsking reports a local video that lacks one of the wanted
// fields of its own: a name's guess is not its own, nor what a peer
// filled in (one peer's word, perhaps a user's lookup's, is not all the
// households that have the file).
func worthAsking(d store.Document) bool {
	if !d.Local() || d.Fields["fileType"] != "video" {
		return false
	}
	_, from := d.Shown()
	own := func(src string) bool { return src == store.FromOwn || src == store.FromEdit }
	for _, w := range wanted {
		if strings.HasSuffix(w, "/") {
			found := false
			for u, src := range from {
				if strings.HasPrefix(u, w) && own(src) {
					found = true
				}
			}
			if !found {
				return true
			}
			continue
		}
		if !own(from[w]) {
			return true
		}
	}
	return false
}

// ask asks the providers of d's canonical CID (the connected peers when
// the DHT names none) for their records of it, each the moment the walk
// names it and within its own time, and merges each that verifies.
func (l *learner) ask(ctx context.Context, d store.Document) {
	c := d.CanonicalCID()
	id, err := cid.Decode(c)
	if err != nil {
		l.next[d.Root] = time.Now().Add(learnAgainAfter)
		return
	}
	l.asked.Add(1)
	self := l.net.self()
	var (
		wg             sync.WaitGroup
		merged, silent atomic.Int64
		asked          = map[peer.ID]bool{}
	)
	fetch := func(p peer.ID) {
		if p == self || asked[p] || len(asked) >= learnProviders || l.scores.distrusted(p) {
			return
		}
		asked[p] = true
		l.requests.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fctx, cancel := context.WithTimeout(ctx, l.timeout)
			defer cancel()
			rec, err := l.net.fetch(fctx, p, c)
			if err != nil {
				if !errors.Is(err, errNoRecord) {
					silent.Add(1) // no answer at all, where a "none" is an answer
				}
				return
			}
			res, err := l.st.MergeRecord(fctx, p.String(), rec.CIDs, rec.Meta)
			if err != nil || res.Conflict {
				l.log.Debug("a peer's record of a local file not merged", "peer", p, "cid", c, "err", err, "conflict", res.Conflict)
				return
			}
			merged.Add(1)
		}()
	}
	wctx, cancel := context.WithTimeout(ctx, l.timeout)
	for p := range l.net.providers(wctx, id, learnProviders+1) {
		fetch(p)
	}
	cancel()
	if len(asked) == 0 {
		for _, p := range l.net.connected() {
			fetch(p)
		}
	}
	wg.Wait()
	if n := merged.Load(); n > 0 {
		l.answered.Add(1)
		delete(l.missed, d.Root)
		l.next[d.Root] = time.Now().Add(learnAgainAfter)
		if silent.Load() > 0 && !l.retried[d.Root] {
			l.retried[d.Root] = true
			l.next[d.Root] = time.Now().Add(learnRetryAfter)
		}
		l.log.Debug("asked peers about a local file", "cid", c, "answers", n)
		return
	}
	l.missed[d.Root] = len(l.seen)
	l.next[d.Root] = time.Now().Add(learnMissAgainAfter)
}
