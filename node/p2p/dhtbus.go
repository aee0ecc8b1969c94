package p2p

import (
	"errors"
	"sync"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
)

// dhtHost is the host as the DHT sees it: the same host, but the
// reachability events it switches modes on (--dht-mode auto) come from
// reach, which derives them from AutoNAT v2, and not from AutoNAT v1.
type dhtHost struct {
	host.Host
	bus event.Bus
}

func (h dhtHost) EventBus() event.Bus { return h.bus }

// splitBus takes subscriptions to EvtLocalReachabilityChanged from own
// and every other event from the host's bus.
type splitBus struct {
	event.Bus
	own event.Bus
}

func (b splitBus) Subscribe(eventType any, opts ...event.SubscriptionOpt) (event.Subscription, error) {
	types, ok := eventType.([]any)
	if !ok {
		types = []any{eventType}
	}
	var rest []any
	mine := false
	for _, t := range types {
		if _, is := t.(*event.EvtLocalReachabilityChanged); is {
			mine = true
			continue
		}
		rest = append(rest, t)
	}
	if !mine {
		return b.Bus.Subscribe(eventType, opts...)
	}
	own, err := b.own.Subscribe(new(event.EvtLocalReachabilityChanged), opts...)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return own, nil
	}
	other, err := b.Bus.Subscribe(rest, opts...)
	if err != nil {
		own.Close()
		return nil, err
	}
	return mergeSubs(own, other), nil
}

// mergedSub delivers the events of several subscriptions on one channel.
type mergedSub struct {
	subs []event.Subscription
	out  chan any
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func mergeSubs(subs ...event.Subscription) *mergedSub {
	m := &mergedSub{subs: subs, out: make(chan any, 16), done: make(chan struct{})}
	for _, s := range subs {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for {
				select {
				case <-m.done:
					return
				case e, ok := <-s.Out():
					if !ok {
						return
					}
					select {
					case m.out <- e:
					case <-m.done:
						return
					}
				}
			}
		}()
	}
	return m
}

func (m *mergedSub) Out() <-chan any { return m.out }
func (m *mergedSub) Name() string    { return "metamesh dht" }

func (m *mergedSub) Close() error {
	var errs []error
	m.once.Do(func() {
		close(m.done)
		for _, s := range m.subs {
			errs = append(errs, s.Close())
		}
		m.wg.Wait()
		close(m.out)
	})
	return errors.Join(errs...)
}
