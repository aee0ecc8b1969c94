package store

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// RootID is an internal root: a UUIDv7 written as 26 characters of
// Crockford base32 (ULID-compatible). Roots never leave the node.
type RootID string

// rootGen mints strictly increasing UUIDv7 values: the 12-bit rand_a field
// (RFC 9562 method 1) is a counter within one millisecond, so IDs minted by
// one process sort by mint order.
type rootGen struct {
	mu      sync.Mutex
	lastMS  uint64
	counter uint16
}

var defaultGen rootGen

// NewRootID mints a root ID for the current time.
func NewRootID() RootID { return defaultGen.next(time.Now()) }

func (g *rootGen) next(now time.Time) RootID {
	g.mu.Lock()
	ms := uint64(now.UnixMilli())
	var rnd [10]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	switch {
	case ms > g.lastMS:
		g.lastMS = ms
		g.counter = binary.BigEndian.Uint16(rnd[:2]) & 0x7FF // start low to leave room
	default:
		g.counter++
		if g.counter > 0xFFF {
			g.lastMS++
			g.counter = 0
		}
	}
	ms, ctr := g.lastMS, g.counter
	g.mu.Unlock()

	var b [16]byte
	b[0], b[1], b[2] = byte(ms>>40), byte(ms>>32), byte(ms>>24)
	b[3], b[4], b[5] = byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70 | byte(ctr>>8) // version 7
	b[7] = byte(ctr)
	copy(b[8:], rnd[2:])
	b[8] = 0x80 | (b[8] & 0x3F) // variant 10
	return RootID(ulid.ULID(b).String())
}
