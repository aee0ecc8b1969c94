package p2p

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/pnet"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/protocol/autonatv2"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// The reachability verdict. libp2p's own tracker calls an address
// reachable or not once two AutoNAT v2 answers agree, and asks any one
// server at most every two minutes: a household whose only public peer
// is its relay waits two to four minutes for a verdict. The node counts
// every single answer too (each is a dial-back by a peer it is connected
// to directly) and decides on what it already knows:
//
//   - public: an address the tracker confirmed dialable, or one that
//     more dial-backs reached than missed;
//   - private: an address the tracker confirmed undialable, or: peers it
//     named see it at an outside address (none of its interfaces has
//     it: it is behind a NAT), dial-backs missed, and none reached any
//     of its addresses;
//   - unknown otherwise.
//
// The tracker's verdict stands over single answers when both exist. What
// the verdict rests on is told beside it (/api/status reachabilityBasis).

// answersKept is how long a single dial-back answer counts.
const answersKept = time.Hour

// dialBacks are the AutoNAT v2 answers the node got, by address.
type dialBacks struct {
	mu sync.Mutex
	by map[string]*dialBack
}

type dialBack struct {
	addr            ma.Multiaddr
	reached, missed int
	lastAt          time.Time
}

// add records one answer on addr.
func (d *dialBacks) add(addr ma.Multiaddr, reachable bool, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.by == nil {
		d.by = map[string]*dialBack{}
	}
	k := addr.String()
	b := d.by[k]
	if b == nil {
		b = &dialBack{addr: addr}
		d.by[k] = b
	}
	if reachable {
		b.reached++
	} else {
		b.missed++
	}
	b.lastAt = now
}

// current are the answers still counted, by address.
func (d *dialBacks) current(now time.Time) []dialBack {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []dialBack
	for k, b := range d.by {
		if now.Sub(b.lastAt) > answersKept {
			delete(d.by, k)
			continue
		}
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b dialBack) int { return strings.Compare(a.addr.String(), b.addr.String()) })
	return out
}

// verdictInput is what a verdict is made of.
type verdictInput struct {
	// confirmed and refuted are the tracker's addresses (two agreeing
	// answers each).
	confirmed, refuted []ma.Multiaddr
	answers            []dialBack
	// outside is an address named peers see the node at that none of its
	// interfaces has ("" when none).
	outside string
	// publicIface reports whether one of the node's own addresses is
	// public (AutoNAT probes public addresses only).
	publicIface bool
}

// verdict is the reachability, the addresses confirmed dialable, and
// what the verdict rests on, in words a household can read.
func verdict(in verdictInput) (state string, reachable []ma.Multiaddr, basis string) {
	reachable = slices.Clone(in.confirmed)
	var missed, reached int
	for _, b := range in.answers {
		missed += b.missed
		reached += b.reached
		if b.reached > b.missed && !slices.ContainsFunc(reachable, b.addr.Equal) {
			reachable = append(reachable, b.addr)
		}
	}
	switch {
	case len(in.confirmed) > 0:
		return reachPublic, reachable, fmt.Sprintf("AutoNAT v2: peers dialed %s back, answers that agree", in.confirmed[0])
	case len(reachable) > 0:
		return reachPublic, reachable, fmt.Sprintf("AutoNAT v2: a peer it is connected to dialed %s back (%s)", reachable[0], answersOf(in.answers, reachable[0]))
	case len(in.refuted) > 0:
		return reachPrivate, nil, fmt.Sprintf("AutoNAT v2: peers could not dial %s back, answers that agree", in.refuted[0])
	case in.outside != "" && missed > 0 && reached == 0:
		return reachPrivate, nil, fmt.Sprintf("behind a NAT: the peers it named see it at %s, which none of its interfaces has, and %s",
			in.outside, pluralCount(missed, "dial-back", "dial-backs")+" to its addresses missed, none reached")
	case !in.publicIface && in.outside == "":
		return reachUnknown, nil, "its addresses are private (a LAN, loopback) and no peer has reported an outside one: AutoNAT v2 probes public addresses only"
	}
	if missed+reached > 0 {
		return reachUnknown, nil, fmt.Sprintf("dial-backs so far: %d reached, %d missed, not enough to tell", reached, missed)
	}
	return reachUnknown, nil, "no dial-back has answered yet (AutoNAT v2 asks the public peers it is connected to directly)"
}

// answersOf says how addr's dial-backs went.
func answersOf(answers []dialBack, addr ma.Multiaddr) string {
	for _, b := range answers {
		if b.addr.Equal(addr) {
			return fmt.Sprintf("%d reached, %d missed", b.reached, b.missed)
		}
	}
	return ""
}

func pluralCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// publicIfaceOf reports whether one of addrs is a public address.
func publicIfaceOf(addrs []ma.Multiaddr) bool {
	return slices.ContainsFunc(addrs, manet.IsPublicAddr)
}

// autonatAnswers hands every AutoNAT v2 answer the node gets to its
// verdict (the client side of autonatv2's MetricsTracer).
type autonatAnswers struct{ r *reach }

func (a autonatAnswers) CompletedRequest(autonatv2.EventDialRequestCompleted) {}

func (a autonatAnswers) ClientCompletedRequest(_ []autonatv2.Request, res autonatv2.Result, err error) {
	if err != nil || res.AllAddrsRefused || res.Addr == nil {
		return
	}
	switch res.Reachability {
	case network.ReachabilityPublic:
		a.r.answered(res.Addr, true)
	case network.ReachabilityPrivate:
		a.r.answered(res.Addr, false)
	}
}

// newAutoNAT makes the node's AutoNAT v2 service (client and server) and
// the host it dials peers back from, as libp2p's own option does (a
// fresh identity, no listening, the same private network and gaters), with
// every answer the client gets handed to r.
func newAutoNAT(psk pnet.PSK, gaters gaterChain, r *reach) (*autonatv2.AutoNAT, host.Host, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	opts := append(transports(psk),
		libp2p.Identity(key),
		libp2p.NoListenAddrs,
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.DialRanker(swarm.NoDelayDialRanker),
		libp2p.Ping(false),
	)
	if len(gaters) > 0 {
		opts = append(opts, libp2p.ConnectionGater(gaters))
	}
	dialer, err := libp2p.New(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("p2p: autonat dial-back host: %w", err)
	}
	an, err := autonatv2.New(dialer, autonatv2.WithMetricsTracer(autonatAnswers{r}))
	if err != nil {
		dialer.Close()
		return nil, nil, fmt.Errorf("p2p: autonat: %w", err)
	}
	return an, dialer, nil
}
