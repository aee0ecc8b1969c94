package p2p

import (
	"sync/atomic"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

// Status is what the host tells of itself in /api/status.
type Status struct {
	// Reachability is public, private or unknown; ReachableAddrs the
	// addresses AutoNAT v2 confirmed dialable; Basis what the verdict
	// rests on, in words.
	Reachability   string
	ReachableAddrs []ma.Multiaddr
	Basis          string
	// ObservedAddrs are the addresses peers report seeing the node at.
	ObservedAddrs []ma.Multiaddr
	// RelayService: the node relays for others (--relay-service).
	RelayService bool
	// Relays are the relays the node keeps a reservation with.
	Relays []RelayInfo
}

// Status reads the host's reachability, observed addresses and relays.
func (p *Net) Status() Status {
	st := Status{RelayService: p.relay != nil, Relays: p.reach.Relays()}
	st.Reachability, st.ReachableAddrs = p.reach.Reachability()
	st.Basis = p.reach.Basis()
	st.ObservedAddrs = p.obs.Addrs(1)
	return st
}

// RegisterMetrics registers the host's metamesh_ series on reg (read at
// scrape time): relay reservations, relayed connections, hole punches and
// reachability. Libp2p's own series (the relay service's) are on Registry.
func (p *Net) RegisterMetrics(reg prometheus.Registerer) {
	reach := p.reach
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	reg.MustRegister(
		gauge("metamesh_relay_reservations", "Relays the node holds a reservation with.",
			func() float64 { return float64(reach.Reservations()) }),
		gauge("metamesh_relayed_connections", "Open connections that go through a relay.",
			func() float64 {
				c := 0
				for _, conn := range p.host.Network().Conns() {
					if Relayed(conn) {
						c++
					}
				}
				return float64(c)
			}),
	)
	for result, v := range map[string]*atomic.Int64{"success": &reach.punchOK, "failure": &reach.punchFail} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "metamesh_holepunch_total", Help: "Hole punches (DCUtR) by result: a relayed connection upgraded to a direct one, or not.",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 { return float64(v.Load()) }))
	}
	for _, s := range reachStates {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "metamesh_reachability", Help: "1 for the node's reachability (AutoNAT v2: public, private, unknown), 0 for the others.",
			ConstLabels: prometheus.Labels{"state": s},
		}, func() float64 {
			if st, _ := reach.Reachability(); st == s {
				return 1
			}
			return 0
		}))
	}
}

// Registry holds libp2p's own metrics the node serves (the relay
// service's).
func (p *Net) Registry() *prometheus.Registry { return p.reg }
