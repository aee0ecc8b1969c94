package federation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Stream limits of the record protocol.
const (
	// recordStreamTimeout bounds a whole record exchange, both ways.
	recordStreamTimeout = 10 * time.Second
	// requestReadTimeout bounds the reading of an inbound request (of
	// either protocol): a request is a few hundred bytes at most, so a peer
	// that trickles one does not hold the stream for the whole exchange's
	// deadline. The rest of that deadline is for the answer.
	requestReadTimeout = 2 * time.Second
)

// peerService is what the record and search protocols share: the host
// they answer on, the store, the key that signs their answers, the
// bound on one peer's open streams, the versions they speak (newest
// first), the household's name their answers carry, and the names peers'
// answers carried (one set, shared by both services).
type peerService struct {
	h      host.Host
	st     *store.Store
	key    crypto.PrivKey
	log    *slog.Logger
	protos []libp2pproto.ID
	name   string
	names  *peerNames
	// private says a local file is private (HouseholdConfig.Private):
	// peers get no record of it and no hit. nil: none is.
	private func(path string) bool

	inbound peerLimit
}

func newPeerService(h host.Host, st *store.Store, key crypto.PrivKey, log *slog.Logger, component string, versions []string) peerService {
	protos := make([]libp2pproto.ID, len(versions))
	for i, v := range versions {
		protos[i] = libp2pproto.ID(v)
	}
	return peerService{h: h, st: st, key: key, log: log.With("component", component), protos: protos, names: &peerNames{}}
}

// listen answers every version of the protocol with handle.
func (ps *peerService) listen(handle network.StreamHandler) {
	for _, p := range ps.protos {
		ps.h.SetStreamHandler(p, handle)
	}
}

// close stops answering the protocol.
func (ps *peerService) close() {
	for _, p := range ps.protos {
		ps.h.RemoveStreamHandler(p)
	}
}

// recordService answers /metamesh/record/1.1.0 and 1.0.0 and asks peers
// on them, 1.1.0 first.
type recordService struct{ peerService }

// newRecordService answers on h; name is the household's (checked by
// protocol.CheckName), "" for none.
func newRecordService(h host.Host, st *store.Store, key crypto.PrivKey, name string, log *slog.Logger) *recordService {
	rs := &recordService{newPeerService(h, st, key, log, "records", protocol.RecordProtocols)}
	rs.name = name
	rs.listen(rs.handle)
	return rs
}

// handle answers one request: the signed record of a local file, or an
// empty response. Files the node knows only from peers are not answered
// for, nor CIDs a local file holds only because peers' records carried
// them: a record is signed by its producer, and carries only the members
// the node vouches for (Document.Vouched).
func (rs *recordService) handle(s network.Stream) {
	version := string(s.Protocol())
	serveStream(s, &rs.inbound, recordStreamTimeout, rs.log, "record", func(r *bufio.Reader) ([]byte, error) {
		asked, err := protocol.ReadRequest(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		return rs.sealed(context.Background(), version, asked)
	})
}

// errBadRequest: a peer's request did not parse (logged at debug: a peer's
// fault, not the node's).
var errBadRequest = errors.New("bad request")

// serveStream runs one inbound exchange of a request/answer protocol: at
// most p2p.MaxInboundPerPeer open per peer, requestReadTimeout to read the
// request, a deadline on the whole exchange for the answer, Reset on any
// error and Close on success. answer reads the request and returns the
// response body (nil: "not here").
func serveStream(s network.Stream, limit *peerLimit, timeout time.Duration, log *slog.Logger, what string, answer func(*bufio.Reader) ([]byte, error)) {
	from := s.Conn().RemotePeer()
	if !limit.enter(from) {
		log.Debug("too many "+what+" streams from one peer; reset", "peer", from)
		s.Reset()
		return
	}
	defer limit.leave(from)
	start := time.Now()
	_ = s.SetReadDeadline(start.Add(min(requestReadTimeout, timeout)))
	_ = s.SetWriteDeadline(start.Add(timeout))
	body, err := answer(bufio.NewReader(s))
	if err != nil {
		lvl := slog.LevelWarn
		if errors.Is(err, errBadRequest) {
			lvl = slog.LevelDebug
		}
		log.Log(context.Background(), lvl, "cannot answer a "+what+" request; reset", "peer", from, "err", err)
		s.Reset()
		return
	}
	if err := protocol.WriteResponse(s, body); err != nil {
		s.Reset()
		return
	}
	s.Close()
}

// sealed returns the signed record of the local file asked names, in
// version (with the household's name from 1.1.0), or nil when there is
// none.
func (rs *recordService) sealed(ctx context.Context, version, asked string) ([]byte, error) {
	c, err := protocol.Normalize(asked)
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	doc, err := rs.st.DocumentByCID(ctx, c)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!doc.Local() || !doc.Vouches(c))) {
		// Not a local file, or a member of one that only peers vouch for:
		// they answer for it, not this node.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ps := rs.private; ps != nil && ps(doc.FilePath()) {
		// A private file: answered as a file the node does not have.
		return nil, nil
	}
	rec, err := protocol.NewRecord(doc.Vouched(), doc.Fields, rs.h.ID(), time.Now())
	if err != nil {
		return nil, err
	}
	rec.Name = rs.name
	return protocol.SealRecordAs(version, rec, rs.key)
}

// peerLimit bounds the streams of one protocol each peer may have open
// at once (p2p.MaxInboundPerPeer); its zero value is ready to use.
type peerLimit struct {
	mu   sync.Mutex
	open map[peer.ID]int
}

// enter reports whether p may open one more stream, and counts it.
func (l *peerLimit) enter(p peer.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = map[peer.ID]int{}
	}
	if l.open[p] >= p2p.MaxInboundPerPeer {
		return false
	}
	l.open[p]++
	return true
}

// leave counts one of p's streams closed.
func (l *peerLimit) leave(p peer.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[p]--; l.open[p] <= 0 {
		delete(l.open, p)
	}
}

// errNoRecord: the peer answered that it has no file with the CID.
var errNoRecord = errors.New("peer has no record for the CID")

// errRelayCut: an answer over a relayed connection broke off, most likely
// at the relay's limit (circuit relay v2 carries at most 128 KiB each way
// per circuit, by default): a record larger than what is left of it
// cannot cross until the connection is direct.
var errRelayCut = errors.New("the relay cut the answer off (a relayed connection carries a limited number of bytes: 128 KiB each way by default)")

// fetch asks peer p for the record of c, in the newest version p speaks,
// and verifies it (signature, payload type, signer = p = the record's
// peer, the record holds c, every CID canonical, the canonical of the
// set, size caps); a 1.1.0 record's name (or its absence) is remembered
// as p's. A record a relay cut off is asked again once over a fresh
// circuit.
func (rs *recordService) fetch(ctx context.Context, p peer.ID, c string) (protocol.Record, error) {
	return onFreshCircuit(ctx, rs.h, p, func() (protocol.Record, error) { return rs.fetchOnce(ctx, p, c) })
}

// onFreshCircuit runs ask, and once more over a new circuit when a relay
// cut its answer off: a circuit carries a limited number of bytes
// (128 KiB each way by default), and an answer that found too little
// left of one may fit a fresh one. The exhausted circuit is closed.
func onFreshCircuit[T any](ctx context.Context, h host.Host, p peer.ID, ask func() (T, error)) (T, error) {
	v, err := ask()
	if !errors.Is(err, errRelayCut) || ctx.Err() != nil {
		return v, err
	}
	for _, c := range h.Network().ConnsToPeer(p) {
		if p2p.Relayed(c) {
			_ = c.Close()
		}
	}
	return ask()
}

func (rs *recordService) fetchOnce(ctx context.Context, p peer.ID, c string) (protocol.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, recordStreamTimeout)
	defer cancel()
	from := fmt.Sprintf("record from %s", p)
	version, env, err := exchange{protos: rs.protos, write: func(w io.Writer) error { return protocol.WriteRequest(w, c) },
		from: from, toDeadline: true}.run(ctx, rs.h, p)
	if err != nil {
		return protocol.Record{}, err
	}
	if len(env) == 0 {
		return protocol.Record{}, errNoRecord
	}
	rec, err := protocol.OpenRecordAs(version, env, p, c)
	if err != nil {
		return protocol.Record{}, fmt.Errorf("%s: %w", from, err)
	}
	if version == protocol.RecordProtocolV11 {
		rs.names.learn(p, rec.Name)
	}
	return rec, nil
}
