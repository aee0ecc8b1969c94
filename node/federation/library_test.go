package federation

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pproto "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/protocol"
)

// libraryHousehold answers the library protocol on a host of its own on
// loopback, from an empty catalog, to the peers visible allows.
func libraryHousehold(t *testing.T, name string, visible func(peer.ID) bool) *libraryService {
	t.Helper()
	key := anyKey(t)
	ls := newLibraryService(newHost(t, key), catalog.New(), key, name, visible, slog.New(slog.DiscardHandler))
	t.Cleanup(ls.close)
	return ls
}

// rawLibrary opens a library stream from ls to p, writes msg, closes its
// side and reads the answer.
func rawLibrary(t *testing.T, ls *libraryService, p peer.ID, msg []byte) ([]byte, error) {
	t.Helper()
	s, err := ls.h.NewStream(t.Context(), p, libp2pproto.ID(protocol.LibraryProtocolID))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(msg); err != nil {
		return nil, err
	}
	_ = s.CloseWrite()
	return protocol.ReadResponse(bufio.NewReader(s))
}

// The library protocol on the wire: a friend gets the signed page, named;
// a peer not shown the list the refusal (a response of zero length); a
// request that does not parse, or announces more than the cap, a reset
// stream. The asking side tells each apart: ErrRefused, ErrPeerFailed (a
// reset, an answer that does not verify), ErrPeerTimeout, ErrNotFound (a
// peer it knows no address of).
func TestLibrary_Wire(t *testing.T) {
	t.Parallel()
	friend := libraryHousehold(t, "Bob", nil)
	stranger := libraryHousehold(t, "", nil)
	alice := libraryHousehold(t, "Alice's NAS", func(p peer.ID) bool { return p == friend.h.ID() })
	for _, ls := range []*libraryService{friend, stranger} {
		connect(t, ls.h, alice.h)
	}
	films := protocol.LibraryRequest{View: protocol.LibraryFilms, Page: 1, Limit: 10}

	a, err := friend.ask(t.Context(), alice.h.ID(), films)
	if err != nil || a.Name != "Alice's NAS" || a.View != "films" || a.Entries == nil || len(a.Entries) != 0 {
		t.Errorf("the friend's answer: %+v, %v; want Alice's empty, named list", a, err)
	}
	if names := friend.names.of(alice.h.ID().String()); names[alice.h.ID().String()] != "Alice's NAS" {
		t.Errorf("the friend learned names %v", names)
	}
	if _, err := stranger.ask(t.Context(), alice.h.ID(), films); !errors.Is(err, model.ErrRefused) {
		t.Errorf("the stranger: %v, want ErrRefused", err)
	}
	for _, tt := range []struct {
		name  string
		msg   []byte
		reset bool // else the refusal, an empty body
	}{
		{"the refusal", frame(`{"view":"films","page":1,"limit":10}`), false},
		{"a request that does not parse", frame(`{"view":"films","page":1,"limit":1000}`), true},
		{"a request past the cap", []byte{0x81, 0x80, 0x01}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := rawLibrary(t, stranger, alice.h.ID(), tt.msg)
			switch {
			case !tt.reset && (err != nil || body != nil):
				t.Errorf("%x, %v; want the empty refusal", body, err)
			case tt.reset && err == nil:
				t.Errorf("%x; want the stream reset", body)
			}
		})
	}

	// A peer that answers what does not verify, and one that never
	// answers.
	liar := libraryHousehold(t, "", nil)
	liar.h.SetStreamHandler(libp2pproto.ID(protocol.LibraryProtocolID), func(s network.Stream) {
		_, _ = protocol.ReadLibraryRequest(s)
		_ = protocol.WriteResponse(s, []byte("not an envelope"))
		s.Close()
	})
	hanger := libraryHousehold(t, "", nil)
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	hanger.h.SetStreamHandler(libp2pproto.ID(protocol.LibraryProtocolID), func(s network.Stream) {
		<-hung
		s.Reset()
	})
	connect(t, friend.h, liar.h)
	connect(t, friend.h, hanger.h)
	if _, err := friend.ask(t.Context(), liar.h.ID(), films); !errors.Is(err, model.ErrPeerFailed) || !errors.Is(err, protocol.ErrBadEnvelope) {
		t.Errorf("the liar: %v, want ErrPeerFailed for a bad envelope", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), requestReadTimeout/4)
	defer cancel()
	if _, err := friend.ask(ctx, hanger.h.ID(), films); !errors.Is(err, model.ErrPeerTimeout) {
		t.Errorf("the hanger: %v, want ErrPeerTimeout", err)
	}
	if _, err := friend.ask(t.Context(), anyPeer(t), films); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("a peer known nowhere: %v, want ErrNotFound", err)
	}
	hs := friend.households(t.Context())
	got := map[string]string{}
	for _, h := range hs {
		got[h.Peer] = h.Library + " " + h.Name
	}
	if got[alice.h.ID().String()] != "shared Alice's NAS" || got[liar.h.ID().String()] != "failed " {
		t.Errorf("households %v: want Alice shared and the liar failed", got)
	}
}

// frame is body as one message of the protocol.
func frame(body string) []byte {
	var b []byte
	n := len(body)
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(append(b, byte(n)), body...)
}

// anyPeer is a peer ID no host has.
func anyPeer(t *testing.T) peer.ID {
	t.Helper()
	id, err := peer.IDFromPrivateKey(anyKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return id
}
