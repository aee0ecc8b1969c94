package handoff

import (
	"bytes"
	"sync"
	"time"

	pb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-varint"
	"google.golang.org/protobuf/proto"
)

// MaxHeld bounds the provider records a household keeps track of (about
// 150 bytes each): past it, records of new keys are not tracked (the DHT
// still stores them) and so not handed over.
const MaxHeld = 1 << 20

// Held is the index of the provider records the household's DHT holds:
// the records peers provided to it (seen on its DHT streams) and its own,
// each with the time it expires, and the records handed to it. kad-dht's
// provider store cannot list what it holds, and a record handed over
// keeps the expiry its provider's provide gave it, which the store does
// not know. Held is safe for concurrent use.
type Held struct {
	validity time.Duration

	mu   sync.Mutex
	recs map[string]map[peer.ID]time.Time // key (multihash bytes) → provider → expiry
	n    int
}

// NewHeld returns an empty index of records valid for validity (the DHT's
// provider record validity).
func NewHeld(validity time.Duration) *Held {
	return &Held{validity: validity, recs: map[string]map[peer.ID]time.Time{}}
}

// Add notes that the DHT holds p's record of key until exp. It returns
// false when the index already had it until exp or later, or is full.
func (h *Held) Add(key []byte, p peer.ID, exp time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ps := h.recs[string(key)]
	if ps == nil {
		if h.n >= MaxHeld {
			return false
		}
		ps = map[peer.ID]time.Time{}
		h.recs[string(key)] = ps
	}
	old, had := ps[p]
	if had && !exp.After(old) {
		return false
	}
	if !had {
		if h.n >= MaxHeld {
			return false
		}
		h.n++
	}
	ps[p] = exp
	return true
}

// Provided notes a provide of key by p now: valid for the validity.
func (h *Held) Provided(key []byte, p peer.ID) {
	h.Add(key, p, time.Now().Add(h.validity))
}

// Len is how many records the index holds.
func (h *Held) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// entry is one key's unexpired providers, as a snapshot.
type entry struct {
	key   []byte
	provs []provider
}

type provider struct {
	id  peer.ID
	exp time.Time
}

// snapshot copies the unexpired records and drops the expired ones.
func (h *Held) snapshot(now time.Time) []entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]entry, 0, len(h.recs))
	for k, ps := range h.recs {
		e := entry{key: []byte(k)}
		for p, exp := range ps {
			if !exp.After(now) {
				delete(ps, p)
				h.n--
				continue
			}
			e.provs = append(e.provs, provider{p, exp})
		}
		if len(ps) == 0 {
			delete(h.recs, k)
			continue
		}
		out = append(out, e)
	}
	return out
}

// Observe returns h as the DHT should be given it: the same host, whose
// DHT stream handlers (protocol IDs ending in "/kad/1.0.0") read through a
// tee that notes, in held, every ADD_PROVIDER record a peer sends for
// itself, the ones kad-dht stores. The tee only reads what the DHT reads:
// a message it cannot parse stops the tee on that stream, never the DHT.
func Observe(h host.Host, held *Held) host.Host { return observedHost{Host: h, held: held} }

type observedHost struct {
	host.Host
	held *Held
}

func (o observedHost) SetStreamHandler(pid libp2pproto.ID, handler network.StreamHandler) {
	if !bytes.HasSuffix([]byte(pid), []byte("/kad/1.0.0")) {
		o.Host.SetStreamHandler(pid, handler)
		return
	}
	o.Host.SetStreamHandler(pid, func(s network.Stream) {
		handler(&teeStream{Stream: s, from: s.Conn().RemotePeer(), held: o.held})
	})
}

// maxDHTMessage is kad-dht's cap on one message (network.MessageSizeMax).
const maxDHTMessage = 4 << 20

// teeStream parses the length-prefixed DHT messages read from it.
type teeStream struct {
	network.Stream
	from peer.ID
	held *Held
	buf  []byte
	off  bool
}

func (t *teeStream) Read(p []byte) (int, error) {
	n, err := t.Stream.Read(p)
	if n > 0 && !t.off {
		t.buf = append(t.buf, p[:n]...)
		t.parse()
	}
	return n, err
}

// parse takes every whole message off the buffer.
func (t *teeStream) parse() {
	for !t.off {
		size, k, err := varint.FromUvarint(t.buf)
		if err != nil {
			if len(t.buf) >= varint.MaxLenUvarint63 {
				t.stop()
			}
			return // the prefix is not all here yet
		}
		if size > maxDHTMessage {
			t.stop()
			return
		}
		if uint64(len(t.buf)-k) < size {
			return
		}
		t.note(t.buf[k : k+int(size)])
		t.buf = t.buf[k+int(size):]
	}
}

func (t *teeStream) stop() { t.off, t.buf = true, nil }

// note records an ADD_PROVIDER message's provider that is its sender, as
// kad-dht does (it ignores providers other than the sender).
func (t *teeStream) note(msg []byte) {
	var m pb.Message
	if proto.Unmarshal(msg, &m) != nil {
		t.stop()
		return
	}
	if m.GetType() != pb.Message_ADD_PROVIDER || len(m.GetKey()) == 0 {
		return
	}
	for _, pp := range m.GetProviderPeers() {
		id, err := peer.IDFromBytes(pp.GetId())
		if err != nil || id != t.from {
			continue
		}
		t.held.Provided(m.GetKey(), id)
	}
}

// Expiry is when the index has p's record of key expire.
func (h *Held) Expiry(key []byte, p peer.ID) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	exp, ok := h.recs[string(key)][p]
	return exp, ok
}
