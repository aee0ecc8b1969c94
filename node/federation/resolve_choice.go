package federation

import (
	"slices"
	"time"
)

// choice picks the answer a lookup takes next. A record from a household
// the DHT names as holding the file is taken at once. One from a fan-out
// peer (unsolicited: any connected peer may answer for any CID, and a
// hostile one answers first) is held until the walk is over and every
// provider it named has answered or failed, or the hold (fanoutHold) has
// passed since the first one was held, so a holder's record outranks the
// fastest answer. It is used by the lookup's goroutine only.
type choice struct {
	l    *lookupRun
	held []answer
	// hold fires holdFor after the first answer was held.
	hold <-chan time.Time
	// walked is the walk's end, nil once seen (walkOver).
	walked   <-chan struct{}
	walkOver bool
	// expired: the hold has passed, or no peer is left to answer.
	expired bool
}

// next is the answer to take next; false when none is left.
func (ch *choice) next() (answer, bool) {
	for {
		if a, ok := ch.fromHeld(); ok {
			return a, true
		}
		select {
		case a, ok := <-ch.l.answers:
			if !ok {
				if len(ch.held) == 0 {
					return answer{}, false
				}
				ch.expired = true
				continue
			}
			if ch.l.isProvider(a.from) {
				return a, true
			}
			// Held even once released: fromHeld drains what settled
			// providers sent meanwhile, and takes theirs first.
			ch.keep(a)
		case <-ch.l.changed:
		case <-ch.walked:
			ch.walkOver, ch.walked = true, nil
		case <-ch.hold:
			ch.expired, ch.hold = true, nil
		}
	}
}

// released reports whether the fan-out's answers may be taken: the hold
// has passed, or the walk is over and every provider it named settled.
func (ch *choice) released() bool {
	return ch.expired || (ch.walkOver && ch.l.providersSettled())
}

// keep holds a fan-out answer; the first one starts the hold.
func (ch *choice) keep(a answer) {
	ch.held = append(ch.held, a)
	if ch.hold == nil {
		ch.hold = time.After(ch.l.r.holdFor)
	}
}

// fromHeld takes a held answer that may go: a provider's (one held before
// the walk named its peer) first, else, once released, the first held.
func (ch *choice) fromHeld() (answer, bool) {
	if len(ch.held) == 0 {
		return answer{}, false
	}
	released := ch.released()
	if released {
		ch.drain()
	}
	if i := slices.IndexFunc(ch.held, func(a answer) bool { return ch.l.isProvider(a.from) }); i >= 0 {
		a := ch.held[i]
		ch.held = slices.Delete(ch.held, i, i+1)
		return a, true
	}
	if !released {
		return answer{}, false
	}
	a := ch.held[0]
	ch.held = ch.held[1:]
	return a, true
}

// drain holds every answer already sent: what a settled provider sent is
// on answers by now, and outranks the fan-out's.
func (ch *choice) drain() {
	for {
		select {
		case a, ok := <-ch.l.answers:
			if !ok {
				return
			}
			ch.held = append(ch.held, a)
		default:
			return
		}
	}
}
