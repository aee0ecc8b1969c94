package sim

import (
	"context"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/node/p2p"
)

// countingHost is a household's host: it counts the DHT messages the
// household sends, as messages written on the DHT streams it opens. Every
// DHT request goes on such a stream (kad-dht's message sender opens them
// on the host the DHT was given, the sweeping provider's included), so
// the count covers everything the DHT sends without a change to how the
// household builds it; answers go on streams the asking peer opened and
// are not counted. The streams it opens for other protocols are counted
// by protocol.
type countingHost struct {
	host.Host
	c *counts
}

// counts are one household's counters, over all its runs.
type counts struct {
	dht atomic.Int64 // DHT messages sent

	mu      sync.Mutex
	streams map[protocol.ID]int64 // streams opened, other protocols
}

// dhtProtocol is the prefix of the node's DHT protocol IDs.
const dhtProtocol = p2p.DHTPrefix + "/kad/"

func (h countingHost) NewStream(ctx context.Context, p peer.ID, pids ...protocol.ID) (network.Stream, error) {
	s, err := h.Host.NewStream(ctx, p, pids...)
	if err != nil {
		return s, err
	}
	if !strings.HasPrefix(string(s.Protocol()), dhtProtocol) {
		h.c.mu.Lock()
		if h.c.streams == nil {
			h.c.streams = map[protocol.ID]int64{}
		}
		h.c.streams[s.Protocol()]++
		h.c.mu.Unlock()
		return s, nil
	}
	return &countingStream{Stream: s, sent: &h.c.dht}, nil
}

// opened returns the streams opened by protocol.
func (c *counts) opened() map[protocol.ID]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.streams)
}

// countingStream counts the messages written on it: kad-dht frames each
// message with its length as an unsigned varint, and a message may come
// in several writes (or several in one).
type countingStream struct {
	network.Stream
	sent *atomic.Int64

	mu     sync.Mutex
	left   uint64 // bytes of the current message still to come
	length uint64 // the length prefix read so far
	shift  uint
}

func (s *countingStream) Write(b []byte) (int, error) {
	n, err := s.Stream.Write(b)
	s.count(b[:n])
	return n, err
}

// count follows the framing over b.
func (s *countingStream) count(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(b) > 0 {
		if s.left > 0 {
			k := min(uint64(len(b)), s.left)
			s.left -= k
			b = b[k:]
			continue
		}
		c := b[0]
		b = b[1:]
		s.length |= uint64(c&0x7f) << s.shift
		if c&0x80 != 0 {
			s.shift += 7
			continue
		}
		s.sent.Add(1)
		s.left, s.length, s.shift = s.length, 0, 0
	}
}
