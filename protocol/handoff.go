package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/multiformats/go-multihash"
)

// HandoffProtocolID is the protocol on which a household hands the
// provider records it holds to a peer that has become one of the closest
// to their keys (docs/federation.md, "a federation that grows").
const HandoffProtocolID = "/metamesh/handoff/1.0.0"

// HandoffAskProtocolID is the protocol on which a household asks a peer
// that entered its own closest for the records it should hold: the asker
// writes nothing and closes its side; the peer answers with handoff
// messages, as on HandoffProtocolID, and closes.
const HandoffAskProtocolID = "/metamesh/handoff-ask/1.0.0"

// Caps of the handoff protocol.
const (
	// MaxHandoffMessage is the largest message body, in bytes.
	MaxHandoffMessage = 1 << 20
	// MaxHandoffMessages is how many messages one stream may carry.
	MaxHandoffMessages = 64
	// MaxHandoffRecords is how many keys one message may carry.
	MaxHandoffRecords = 4096
	// MaxHandoffProviders is how many providers one key may carry.
	MaxHandoffProviders = 20
	// MaxHandoffAddrs is how many addresses one provider may carry, and
	// MaxHandoffAddrLen how long each may be (binary form).
	MaxHandoffAddrs   = 8
	MaxHandoffAddrLen = 256
	// MaxHandoffTTL is the longest validity a provider may carry, in
	// seconds: kad-dht's provider record validity (48 h).
	MaxHandoffTTL = 48 * 3600
)

// HandoffRecord is one key and the providers the sender holds for it.
type HandoffRecord struct {
	Key       multihash.Multihash
	Providers []HandoffProvider
}

// HandoffProvider is one provider of a key: its peer ID, the addresses
// the sender knows for it, and how many more seconds its record is valid
// (TTL, 1 to MaxHandoffTTL).
type HandoffProvider struct {
	ID    peer.ID
	Addrs []ma.Multiaddr
	TTL   int64
}

type handoffJSON struct {
	Records []handoffRecordJSON `json:"records"`
}

type handoffRecordJSON struct {
	Key       string                `json:"key"`
	Providers []handoffProviderJSON `json:"providers"`
}

type handoffProviderJSON struct {
	ID    string   `json:"id"`
	Addrs []string `json:"addrs,omitempty"`
	TTL   int64    `json:"ttl"`
}

// WriteHandoff writes one handoff message holding recs: a length prefix
// and a JSON body, {"records":[{"key":<base58btc multihash>,"providers":
// [{"id":<peer ID>,"addrs":[<multiaddr>…],"ttl":<seconds>}]}]}. Records
// that break a cap are an error and nothing is written.
func WriteHandoff(w io.Writer, recs []HandoffRecord) error {
	if len(recs) == 0 || len(recs) > MaxHandoffRecords {
		return fmt.Errorf("write handoff: %w: %d records, want 1 to %d", ErrTooLarge, len(recs), MaxHandoffRecords)
	}
	out := handoffJSON{Records: make([]handoffRecordJSON, 0, len(recs))}
	for _, r := range recs {
		if err := checkHandoffRecord(r); err != nil {
			return fmt.Errorf("write handoff: %w", err)
		}
		jr := handoffRecordJSON{Key: r.Key.B58String()}
		for _, p := range r.Providers {
			jp := handoffProviderJSON{ID: p.ID.String(), TTL: p.TTL}
			for _, a := range p.Addrs {
				jp.Addrs = append(jp.Addrs, a.String())
			}
			jr.Providers = append(jr.Providers, jp)
		}
		out.Records = append(out.Records, jr)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("write handoff: %w", err)
	}
	if len(body) > MaxHandoffMessage {
		return fmt.Errorf("write handoff: %w: %d bytes, at most %d", ErrTooLarge, len(body), MaxHandoffMessage)
	}
	return writeMessage(w, body)
}

// ReadHandoff reads one handoff message. It returns io.EOF when the stream
// ends cleanly before a message. It rejects a body above MaxHandoffMessage
// before reading it (ErrTooLarge), a broken frame (ErrBadFrame), JSON that
// is not exactly the format above (unknown fields, trailing data), and any
// record that breaks a cap or does not parse (ErrBadHandoff): the whole
// message, not only the record, so a sender cannot slip a bad record past
// a receiver that stops early.
func ReadHandoff(r io.Reader) ([]HandoffRecord, error) {
	var one [1]byte
	n, err := r.Read(one[:])
	if n == 0 {
		if err == io.EOF {
			return nil, io.EOF
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return nil, fmt.Errorf("read handoff: %w: %w", ErrBadFrame, err)
	}
	body, err := readMessage(io.MultiReader(bytes.NewReader(one[:]), r), MaxHandoffMessage)
	if err != nil {
		return nil, fmt.Errorf("read handoff: %w", err)
	}
	return ParseHandoff(body)
}

// ParseHandoff parses one handoff message body (ReadHandoff's rules).
func ParseHandoff(body []byte) ([]HandoffRecord, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var in handoffJSON
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHandoff, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the message", ErrBadHandoff)
	}
	if len(in.Records) == 0 || len(in.Records) > MaxHandoffRecords {
		return nil, fmt.Errorf("%w: %d records, want 1 to %d", ErrBadHandoff, len(in.Records), MaxHandoffRecords)
	}
	out := make([]HandoffRecord, 0, len(in.Records))
	for i, jr := range in.Records {
		k, err := multihash.FromB58String(jr.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d: key: %w", ErrBadHandoff, i, err)
		}
		r := HandoffRecord{Key: k}
		if len(jr.Providers) == 0 || len(jr.Providers) > MaxHandoffProviders {
			return nil, fmt.Errorf("%w: record %d: %d providers, want 1 to %d", ErrBadHandoff, i, len(jr.Providers), MaxHandoffProviders)
		}
		for j, jp := range jr.Providers {
			id, err := peer.Decode(jp.ID)
			if err != nil {
				return nil, fmt.Errorf("%w: record %d, provider %d: %w", ErrBadHandoff, i, j, err)
			}
			p := HandoffProvider{ID: id, TTL: jp.TTL}
			if len(jp.Addrs) > MaxHandoffAddrs {
				return nil, fmt.Errorf("%w: record %d, provider %d: %d addresses, at most %d", ErrBadHandoff, i, j, len(jp.Addrs), MaxHandoffAddrs)
			}
			for _, s := range jp.Addrs {
				a, err := ma.NewMultiaddr(s)
				if err != nil {
					return nil, fmt.Errorf("%w: record %d, provider %d: %w", ErrBadHandoff, i, j, err)
				}
				p.Addrs = append(p.Addrs, a)
			}
			r.Providers = append(r.Providers, p)
		}
		if err := checkHandoffRecord(r); err != nil {
			return nil, fmt.Errorf("%w: record %d: %w", ErrBadHandoff, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// checkHandoffRecord applies the caps to one record.
func checkHandoffRecord(r HandoffRecord) error {
	if _, err := multihash.Decode(r.Key); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if len(r.Providers) == 0 || len(r.Providers) > MaxHandoffProviders {
		return fmt.Errorf("%d providers, want 1 to %d", len(r.Providers), MaxHandoffProviders)
	}
	for _, p := range r.Providers {
		if err := p.ID.Validate(); err != nil {
			return fmt.Errorf("provider: %w", err)
		}
		if p.TTL < 1 || p.TTL > MaxHandoffTTL {
			return fmt.Errorf("provider %s: ttl %d, want 1 to %d", p.ID, p.TTL, MaxHandoffTTL)
		}
		if len(p.Addrs) > MaxHandoffAddrs {
			return fmt.Errorf("provider %s: %d addresses, at most %d", p.ID, len(p.Addrs), MaxHandoffAddrs)
		}
		for _, a := range p.Addrs {
			if len(a.Bytes()) > MaxHandoffAddrLen {
				return fmt.Errorf("provider %s: address of %d bytes, at most %d", p.ID, len(a.Bytes()), MaxHandoffAddrLen)
			}
		}
	}
	return nil
}
