package announce

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	mh "github.com/multiformats/go-multihash"
)

// The findability check's schedule and bounds.
const (
	// CheckEvery is how often the household checks that the federation can
	// find it: one region in rotation, one random key of it.
	CheckEvery = 30 * time.Minute
	// firstCheckAfter is how long the provider is online before the first
	// check: its first provides are out by then.
	firstCheckAfter = time.Minute
	// offlinePoll is how often a household that is not online looks again.
	offlinePoll = 15 * time.Second
	// checkTimeout bounds a whole check; askTimeout one peer's answer.
	checkTimeout = time.Minute
	askTimeout   = 10 * time.Second
)

// errNoKeys: the keystore is empty, there is nothing to check.
var errNoKeys = errors.New("findability check: no key to check")

// runChecks checks, every CheckEvery while the provider is online (the
// first time firstCheckAfter after it came online), that the peers
// closest to one of the household's keys hold its record. It returns when
// ctx ends.
func (s *Sweeper) runChecks(ctx context.Context, log *slog.Logger) {
	t := time.NewTimer(offlinePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := offlinePoll
		st, err := s.sp.Stats(ctx)
		switch {
		case err != nil || st.Connectivity.Status != "online":
		case time.Since(st.Connectivity.Since) < firstCheckAfter:
			wait = firstCheckAfter - time.Since(st.Connectivity.Since)
		default:
			if err := s.syncLedger(ctx); err != nil {
				log.Warn("findability check: cannot read the keystore", "err", err)
			}
			c, err := s.check(ctx, st.Schedule.AvgPrefixLength)
			switch {
			case err == nil:
				log.Debug("findability check", "key", mh.Multihash(c.key).B58String(), "closest", c.closest, "holding", c.holding)
			case !errors.Is(err, errNoKeys) && ctx.Err() == nil:
				log.Warn("findability check failed", "err", err)
			}
			wait = CheckEvery
		}
		t.Reset(wait)
	}
}

// syncLedger makes the ledger's keys the keystore's.
func (s *Sweeper) syncLedger(ctx context.Context) error {
	ks, err := s.ks.Get(ctx, "")
	if err != nil {
		return err
	}
	s.ledger.set(ks)
	return nil
}

// check runs one findability check at the provider's mean prefix length
// avg: a random key of the region next in rotation, the peers closest to
// it now (a DHT walk), and a GET_PROVIDERS to each of them, which either
// returns this household among the providers or does not. The household's
// own provider store is not asked. One check runs at a time; it is kept
// as its region's latest.
func (s *Sweeper) check(ctx context.Context, avg float64) (check, error) {
	s.checking.Lock()
	defer s.checking.Unlock()
	pl := prefixLen(avg)
	key, ok := s.ledger.next(pl)
	if !ok {
		return check{}, errNoKeys
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	// A walk that fails finds no peer: a check that found none (kept, so
	// the region shows it).
	peers, _ := s.d.GetClosestPeers(ctx, key)
	c := check{key: key, bits: keyBits(key), closest: len(peers)}
	self := s.d.Host().ID()
	var holding atomic.Int64
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, askTimeout)
			defer cancel()
			provs, _, err := s.asker.GetProviders(actx, p, mh.Multihash(key))
			if err != nil {
				return
			}
			for _, ai := range provs {
				if ai.ID == self {
					holding.Add(1)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return check{}, err // the node is stopping
	}
	c.holding, c.at = int(holding.Load()), time.Now()
	s.ledger.checked(c, pl)
	return c, nil
}
