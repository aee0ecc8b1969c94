package federation

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
)

// exchange is the asking side of one request/answer exchange of the
// record, search or library protocol: what differs between them.
type exchange struct {
	// protos are the versions asked for, newest first.
	protos []libp2pproto.ID
	// write writes the request.
	write func(io.Writer) error
	// from, when not empty, names the answer in a read's error ("record
	// from <peer>"); empty, the read's error is returned as it is.
	from string
	// toDeadline keeps the stream to its deadline when ctx is cancelled
	// before it, and tells a relayed answer that broke off after ctx's
	// end as the relay's cut too (the record protocol's way): else the
	// end of ctx resets the stream, and only an answer that broke off
	// before it is the relay's cut.
	toDeadline bool
}

// run asks p on a new stream of the first of x.protos p speaks (a
// relayed, limited connection carries the protocols too; a direct one,
// when there is one, is taken first): the request, the write side closed,
// then the answer (protocol.ReadResponse), all by ctx's deadline. It
// returns the version the stream speaks and the answer's body (nil for
// the empty answer). Any error resets the stream, success closes it. An
// answer that broke off over a relayed connection is errRelayCut (most
// likely the relay's limit), which onFreshCircuit asks again.
func (x exchange) run(ctx context.Context, h host.Host, p peer.ID) (version string, env []byte, err error) {
	s, err := h.NewStream(network.WithAllowLimitedConn(ctx, "metamesh"), p, x.protos...)
	if err != nil {
		return "", nil, err
	}
	version = string(s.Protocol())
	dl, _ := ctx.Deadline()
	_ = s.SetDeadline(dl)
	if !x.toDeadline {
		stop := context.AfterFunc(ctx, func() { s.Reset() })
		defer stop()
	}
	if err := x.write(s); err != nil {
		s.Reset()
		return "", nil, err
	}
	if err := s.CloseWrite(); err != nil {
		s.Reset()
		return "", nil, err
	}
	env, err = protocol.ReadResponse(bufio.NewReader(s))
	if err != nil {
		s.Reset()
		cut := p2p.Relayed(s.Conn()) && (x.toDeadline || ctx.Err() == nil)
		switch {
		case cut && x.from != "":
			return "", nil, fmt.Errorf("%s over a relayed connection: %w: %w", x.from, errRelayCut, err)
		case cut:
			return "", nil, fmt.Errorf("%w: %w", errRelayCut, err)
		case x.from != "":
			return "", nil, fmt.Errorf("%s: %w", x.from, err)
		}
		return "", nil, err
	}
	s.Close()
	return version, env, nil
}
