package protocol

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
)

// SealRecord is SealRecordAs for 1.0.0.
func SealRecord(r Record, key crypto.PrivKey) ([]byte, error) {
	return SealRecordAs(RecordProtocolID, r, key)
}

// SealRecordAs validates r, signs it with key (which must be r.Peer's)
// into a go-libp2p signed envelope, domain RecordDomain, payload type
// version (one of RecordProtocols), and returns the envelope's bytes: the
// body of a response on a stream of that version. A 1.0.0 record leaves
// the name out. An envelope larger than MaxRecordMessage is ErrTooLarge.
func SealRecordAs(version string, r Record, key crypto.PrivKey) ([]byte, error) {
	if key == nil {
		return nil, errors.New("seal record: no key")
	}
	if !knownRecordVersion(version) {
		return nil, fmt.Errorf("seal record: %w: %q", ErrWrongPayloadType, clip(version))
	}
	if version == RecordProtocolID {
		r.Name = ""
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("seal record: %w", err)
	}
	signer, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("seal record: %w", err)
	}
	if signer != r.Peer {
		return nil, fmt.Errorf("seal record: %w: key of %s, record of %s", ErrWrongPeer, signer, r.Peer)
	}
	payload, err := r.MarshalRecord()
	if err != nil {
		return nil, fmt.Errorf("seal record: %w", err)
	}
	env, err := record.Seal(&rawPayload{version: version, b: payload}, key)
	if err != nil {
		return nil, fmt.Errorf("seal record: %w", err)
	}
	b, err := env.Marshal()
	if err != nil {
		return nil, fmt.Errorf("seal record: %w", err)
	}
	if len(b) > MaxRecordMessage {
		return nil, fmt.Errorf("seal record: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(b), MaxRecordMessage)
	}
	return b, nil
}

// OpenRecord is OpenRecordAs for 1.0.0: the rules of a peer that speaks
// 1.0.0 alone.
func OpenRecord(envelope []byte, from peer.ID, asked string) (Record, error) {
	return OpenRecordAs(RecordProtocolID, envelope, from, asked)
}

// OpenRecordAs verifies a response body received from peer from on a
// stream of protocol version (one of RecordProtocols), asked for CID
// asked (any valid form; it is normalised first), and returns the record.
// It checks, in this order, each failure wrapping its own sentinel:
//
//  1. asked is a valid CID (ErrEmptyCID, ErrInvalidCID);
//  2. the envelope is at most MaxRecordMessage bytes (ErrTooLarge);
//  3. it decodes as a signed envelope (ErrBadEnvelope) whose signature
//     verifies for RecordDomain (ErrBadSignature; a wrong domain fails
//     here, as the domain is signed but not sent);
//  4. its payload type is exactly version (ErrWrongPayloadType; an
//     unknown version fails here too);
//  5. its signer is from (ErrWrongSigner);
//  6. the payload is the record JSON of version (ErrMalformedRecord,
//     ErrTooLarge, ErrBadTime; see Record.UnmarshalRecord; a "name" is
//     1.1.0's only);
//  7. the record's peer is the signer (ErrWrongPeer);
//  8. the record is valid (Record.Validate: canonical-form CIDs, sorted
//     without repeats, cid the canonical, caps, shareable meta, time);
//  9. it holds the asked CID (ErrAskedCIDMissing).
//
// A name passes no check: the peer's claim is untrusted, and CleanName
// makes it safe to show (cut to MaxName bytes, control characters gone)
// before step 8. On error the Record is the zero value.
func OpenRecordAs(version string, envelope []byte, from peer.ID, asked string) (Record, error) {
	if !knownRecordVersion(version) {
		return Record{}, fmt.Errorf("open record: %w: %q", ErrWrongPayloadType, clip(version))
	}
	want, err := Normalize(asked)
	if err != nil {
		return Record{}, fmt.Errorf("open record: asked CID: %w", err)
	}
	if len(envelope) > MaxRecordMessage {
		return Record{}, fmt.Errorf("open record: %w: envelope of %d bytes, at most %d", ErrTooLarge, len(envelope), MaxRecordMessage)
	}
	payload := rawPayload{version: version}
	env, err := record.ConsumeTypedEnvelope(envelope, &payload)
	switch {
	case err != nil && env == nil:
		return Record{}, fmt.Errorf("open record: %w: %w", ErrBadEnvelope, err)
	case err != nil:
		return Record{}, fmt.Errorf("open record: %w: %w", ErrBadSignature, err)
	}
	if !bytes.Equal(env.PayloadType, []byte(version)) {
		return Record{}, fmt.Errorf("open record: %w: got %q", ErrWrongPayloadType, clip(string(env.PayloadType)))
	}
	signer, err := peer.IDFromPublicKey(env.PublicKey)
	if err != nil {
		return Record{}, fmt.Errorf("open record: %w: %w", ErrBadEnvelope, err)
	}
	if signer != from {
		return Record{}, fmt.Errorf("open record: %w: signed by %s, received from %s", ErrWrongSigner, signer, from)
	}
	var r Record
	if err := r.unmarshalAs(version, payload.b); err != nil {
		return Record{}, fmt.Errorf("open record: %w", err)
	}
	r.Name = CleanName(r.Name)
	if r.Peer != signer {
		return Record{}, fmt.Errorf("open record: %w: record names %s, signed by %s", ErrWrongPeer, r.Peer, signer)
	}
	if err := r.Validate(); err != nil {
		return Record{}, fmt.Errorf("open record: %w", err)
	}
	if !r.Has(want) {
		return Record{}, fmt.Errorf("open record: %w: %s", ErrAskedCIDMissing, want)
	}
	return r, nil
}

// rawPayload is a record payload of one version, carried unparsed: what
// SealRecordAs signs, and what OpenRecordAs receives so that it tells
// signature failures (ConsumeTypedEnvelope's errors) apart from payload
// failures (its own).
type rawPayload struct {
	version string
	b       []byte
}

func (*rawPayload) Domain() string                   { return RecordDomain }
func (p *rawPayload) Codec() []byte                  { return []byte(p.version) }
func (p *rawPayload) MarshalRecord() ([]byte, error) { return p.b, nil }
func (p *rawPayload) UnmarshalRecord(b []byte) error {
	p.b = b
	return nil
}
