package protocol

import "errors"

// Sentinel errors. Callers test them with errors.Is; the wrapped message
// says which input was rejected and why.
var (
	// ErrEmptyCID is returned for an empty CID string.
	ErrEmptyCID = errors.New("empty CID")
	// ErrInvalidCID is returned for text that does not decode as a CID.
	ErrInvalidCID = errors.New("invalid CID")
	// ErrNotCanonicalForm is returned by ParseStrict for a valid CID that is
	// not written as CIDv1 in multibase base32 lower.
	ErrNotCanonicalForm = errors.New("CID is not in canonical form (CIDv1, base32 lower)")
)

// Sentinel errors of the record protocol (record.go, wire.go). OpenRecord
// returns exactly one of them per rejected envelope (CID problems in a
// record use ErrEmptyCID, ErrInvalidCID and ErrNotCanonicalForm above), so a
// caller can count rejections by cause. Nothing is partly accepted: on any
// error the returned Record is the zero value.
var (
	// ErrTooLarge is returned when a message, a record or one of its parts
	// exceeds a cap: MaxRequestCID, MaxRecordMessage, MaxRecordCIDs,
	// MaxRecordMeta, MaxMetaKey or MaxMetaValue. Framing reports it from the
	// length prefix alone, before reading or allocating the body.
	ErrTooLarge = errors.New("exceeds a size cap")
	// ErrBadFrame is returned for a message whose framing is broken: a
	// truncated or non-minimal unsigned-varint length prefix, or a body
	// shorter than its prefix announced (that error also wraps
	// io.ErrUnexpectedEOF, or io.EOF when the stream ended before the first
	// byte).
	ErrBadFrame = errors.New("malformed message framing")
	// ErrBadEnvelope is returned for bytes that are not a signed envelope:
	// not the envelope protobuf, or a public key libp2p cannot decode.
	ErrBadEnvelope = errors.New("not a signed envelope")
	// ErrBadSignature is returned when the envelope's signature does not
	// verify under its public key for the domain RecordDomain. The domain
	// is signed but never sent, so an envelope sealed under another domain
	// is reported this way too.
	ErrBadSignature = errors.New("envelope signature does not verify (bad signature or wrong domain)")
	// ErrWrongPayloadType is returned for a validly signed envelope whose
	// payload type is not exactly the bytes of the record protocol's
	// version the stream speaks (one of RecordProtocols).
	ErrWrongPayloadType = errors.New("envelope payload type is not the record protocol's version")
	// ErrWrongSigner is returned when the envelope was signed by a peer
	// other than the one the record came from.
	ErrWrongSigner = errors.New("envelope signer is not the peer the record came from")
	// ErrWrongPeer is returned when the record's "peer" field names another
	// peer than its signer (and by SealRecord, for a key that is not the
	// record's peer's).
	ErrWrongPeer = errors.New("record's peer is not its signer")
	// ErrMalformedRecord is returned for a payload that is not the record
	// JSON: not UTF-8, not one object, a missing, unknown, repeated or
	// wrongly typed field, an empty "cids", a meta key that is not a
	// flat field name (empty, or with an empty "/" segment: see
	// ValidFieldName) or a meta value that is not a string.
	ErrMalformedRecord = errors.New("malformed record")
	// ErrAskedCIDMissing is returned when a record does not hold the CID it
	// was asked for (compared in canonical form).
	ErrAskedCIDMissing = errors.New("record does not hold the asked CID")
	// ErrCIDsNotSorted is returned when a record's "cids" are not in
	// strictly increasing byte order (unsorted, or with a repeat).
	ErrCIDsNotSorted = errors.New(`record's "cids" are not sorted without repeats`)
	// ErrWrongCanonical is returned when a record's "cid" is not
	// Canonical("cids").
	ErrWrongCanonical = errors.New(`record's "cid" is not the canonical CID of its "cids"`)
	// ErrForbiddenMeta is returned for a record whose meta holds a key that
	// must never cross the wire (see ShareableKey).
	ErrForbiddenMeta = errors.New("record meta holds a key that must not cross the wire")
	// ErrBadTime is returned when a record's "time" is not an RFC 3339 time
	// with a year from 1 to 9999, or is the zero time.
	ErrBadTime = errors.New(`record's "time" is not an RFC 3339 time`)
)

// ErrBadHandoff is returned for a handoff message (handoff.go) that is not
// exactly the protocol's JSON, or one of whose records breaks a cap or
// does not parse; the whole message is refused.
var ErrBadHandoff = errors.New("malformed handoff message")
