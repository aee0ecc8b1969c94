package api

import (
	"container/list"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// maxStrangers bounds the client addresses the stranger limiter keeps a
// bucket for (a few hundred bytes each).
const maxStrangers = 10_000

// Federated names the work a request makes the node's peers do.
type Federated string

const (
	// FederatedLookup is GET /api/meta of a CID this node does not hold,
	// or the refresh of a record peers sent that is past its age.
	FederatedLookup Federated = "lookup"
	// FederatedSearch is the first page of GET /api/search?federated=1.
	FederatedSearch Federated = "search"
)

// StrangerLimits bound the federated work of strangers: clients of an API
// off loopback that connect from another machine and send no valid bearer
// token (--public-read lets them reach /api/meta and /api/search). Each
// client address has a token bucket; IPv6 addresses count by their /64,
// since one host may take any address of its /64.
type StrangerLimits struct {
	// Rate is the federated lookups and searches per second one client
	// address may start. 0 gives strangers none (403).
	Rate float64
	// Burst is how many it may start at once, the size of its bucket;
	// below 1 is 1.
	Burst int
}

// Caller is who a request is for, as the federation sees it: a backend
// calls Federate before it asks peers on the request's behalf. The zero
// Caller is trusted (an API on loopback, a client on this machine, a
// client with the bearer token) and never limited.
type Caller struct {
	key string // the stranger's address, or its IPv6 /64
	s   *strangers
}

// Federate takes one token of the caller's bucket for work what. It
// returns nil for a trusted caller and for a stranger within its limit,
// else a *RateLimitedError (429, or 403 when StrangerLimits.Rate is 0),
// which the backend returns as it is. Safe for concurrent use.
func (c Caller) Federate(what Federated) error {
	if c.s == nil {
		return nil
	}
	if what == FederatedFetch {
		return fmt.Errorf("%w: fetching files from other households is for this household's own clients: send Authorization: Bearer <token> (files of this household are served without it)", ErrForbidden)
	}
	return c.s.take(c.key, what, time.Now())
}

// caller is who r is for: trusted on a loopback API, from a loopback
// address, with the bearer token or from a browser an invite let in, else a stranger known by the TCP
// address of the connection. Headers naming another client
// (X-Forwarded-For, Forwarded) are not read: any client can send them.
func (s *Server) caller(r *http.Request) Caller {
	if s.opts.Access.Loopback || s.opts.Access.trusted(r) {
		return Caller{}
	}
	key, local := clientKey(r.RemoteAddr)
	if local {
		return Caller{}
	}
	return Caller{key: key, s: s.strangers}
}

// clientKey is the key a client is limited by: its IPv4 address (an
// IPv4-mapped IPv6 address counts as IPv4), or the /64 prefix of its IPv6
// address; local reports a loopback address. A RemoteAddr that is not
// host:port (never, over TCP) is its own key.
func clientKey(remoteAddr string) (key string, local bool) {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr, false
	}
	a := ap.Addr().Unmap().WithZone("")
	switch {
	case a.IsLoopback():
		return "", true
	case a.Is4():
		return a.String(), false
	}
	p, _ := a.Prefix(64)
	return p.String(), false
}

// strangers is the token buckets of the strangers seen lately, at most
// max of them, least recently used first. A new address takes the place
// of the least recently used one when that one's bucket has filled up
// again (it then holds nothing a new bucket would not), else it draws
// from one overflow bucket that all such addresses share: a flood of
// addresses costs no more memory than max buckets.
type strangers struct {
	limits  StrangerLimits
	max     int
	refill  time.Duration // how long an empty bucket takes to fill
	refused *prometheus.CounterVec

	mu       sync.Mutex
	byKey    map[string]*list.Element // of *bucket
	lru      *list.List
	overflow *rate.Limiter
}

type bucket struct {
	key  string
	lim  *rate.Limiter
	used time.Time
}

func newStrangers(l StrangerLimits, capacity int, reg prometheus.Registerer) *strangers {
	l.Burst = max(l.Burst, 1)
	s := &strangers{limits: l, max: capacity, byKey: map[string]*list.Element{}, lru: list.New(),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metamesh_api_rate_limited_total",
			Help: "Federated lookups and searches refused to clients without the bearer token off loopback (--public-read), by what was asked: past --stranger-rate (429), or with --stranger-rate 0 (403).",
		}, []string{"what"})}
	if l.Rate > 0 {
		s.refill = time.Duration(float64(l.Burst) / l.Rate * float64(time.Second))
		s.overflow = rate.NewLimiter(rate.Limit(l.Rate), l.Burst)
	}
	for _, w := range []Federated{FederatedLookup, FederatedSearch} {
		s.refused.WithLabelValues(string(w))
	}
	if reg != nil {
		reg.MustRegister(s.refused)
	}
	return s
}

// take spends one token of key's bucket at now, or says when to retry.
func (s *strangers) take(key string, what Federated, now time.Time) error {
	e := &RateLimitedError{What: what, Client: key, Limits: s.limits}
	if s.limits.Rate == 0 {
		s.refused.WithLabelValues(string(what)).Inc()
		return e
	}
	s.mu.Lock()
	lim := s.bucket(key, now)
	ok := lim.AllowN(now, 1)
	if !ok {
		wait := (1 - lim.TokensAt(now)) / s.limits.Rate
		e.RetryAfter = time.Duration(math.Ceil(wait * float64(time.Second)))
		e.Shared = lim == s.overflow
	}
	s.mu.Unlock()
	if ok {
		return nil
	}
	s.refused.WithLabelValues(string(what)).Inc()
	return e
}

// bucket returns key's bucket, marked used at now (s.mu held).
func (s *strangers) bucket(key string, now time.Time) *rate.Limiter {
	if el, ok := s.byKey[key]; ok {
		b := el.Value.(*bucket)
		b.used = now
		s.lru.MoveToBack(el)
		return b.lim
	}
	if s.lru.Len() >= s.max {
		oldest := s.lru.Front().Value.(*bucket)
		if now.Sub(oldest.used) < s.refill {
			return s.overflow
		}
		s.lru.Remove(s.lru.Front())
		delete(s.byKey, oldest.key)
	}
	b := &bucket{key: key, lim: rate.NewLimiter(rate.Limit(s.limits.Rate), s.limits.Burst), used: now}
	s.byKey[key] = s.lru.PushBack(b)
	return b.lim
}

// retryAfterSeconds is d in whole seconds, rounded up, at least 1: the
// value of a Retry-After header.
func retryAfterSeconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}
