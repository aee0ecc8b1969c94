package federation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/protocol"
)

// Limits of the library protocol.
const (
	// libraryStreamTimeout bounds one inbound library exchange, and
	// libraryAskTimeout one request this household makes.
	libraryStreamTimeout = 5 * time.Second
	libraryAskTimeout    = 5 * time.Second
	// householdsTimeout bounds GET /api/households' asking of every
	// household, householdsParallel how many at once and householdsMax
	// how many in all.
	householdsTimeout  = 3 * time.Second
	householdsParallel = 8
	householdsMax      = 64
)

// libraryService answers /metamesh/library/1.0.0 with the household's own
// films and shows (the catalog's), to the peers visible allows, and asks
// friends' households for theirs.
type libraryService struct {
	peerService
	cat     *catalog.Catalog
	visible func(peer.ID) bool
	// private says a local file is private, by path
	// (HouseholdConfig.Private; nil: none is).
	private func(path string) bool
}

// newLibraryService answers on h from cat; visible says which peers may
// see the list (nil: none).
func newLibraryService(h host.Host, cat *catalog.Catalog, key crypto.PrivKey, name string, visible func(peer.ID) bool, log *slog.Logger) *libraryService {
	ls := &libraryService{peerService: newPeerService(h, nil, key, log, "library", []string{protocol.LibraryProtocolID}), cat: cat, visible: visible}
	ls.name = name
	ls.listen(ls.handle)
	return ls
}

// listedToPeers reports whether the local file at path may be listed to
// the peers that may see the household's list: any but a private one
// (HouseholdConfig.Private, node/privacy's rule), the one place the
// library protocol asks.
func (ls *libraryService) listedToPeers(path string) bool {
	return ls.private == nil || !ls.private(path)
}

// handle answers one request: a refusal (an empty response) to a peer
// visible does not allow, else the signed page. A request that does not
// parse gets the stream reset.
func (ls *libraryService) handle(s network.Stream) {
	from := s.Conn().RemotePeer()
	serveStream(s, &ls.inbound, libraryStreamTimeout, ls.log, "library", func(r *bufio.Reader) ([]byte, error) {
		req, err := protocol.ReadLibraryRequest(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		if ls.visible == nil || !ls.visible(from) {
			ls.log.Debug("library asked by a peer it is not shown to; refused", "peer", from)
			return nil, nil
		}
		return ls.sealed(req)
	})
}

// sealed is the signed answer to req. An entry of a shape the protocol
// refuses (an outside writer's field out of range) goes without its
// poster when that is what is wrong, else is left out of its page,
// rather than failing it.
func (ls *libraryService) sealed(req protocol.LibraryRequest) ([]byte, error) {
	a := ls.cat.Shared(req, ls.listedToPeers)
	a.Name = ls.name
	for i, e := range a.Entries {
		if e.Validate(req.View) != nil {
			a.Entries[i].Poster = ""
		}
	}
	a.Entries = slices.DeleteFunc(a.Entries, func(e protocol.LibraryEntry) bool { return e.Validate(req.View) != nil })
	return protocol.SealLibrary(req, a, ls.key)
}

// errLibraryRefused: the peer answered that it does not show its list to
// this household.
var errLibraryRefused = errors.New("the household does not show its list to this one")

// ask asks p for one page of its list and verifies the answer (signature,
// payload type, signer = p, what was asked, caps, every entry); its name
// (or its absence) is remembered as p's. Errors wrap model.ErrNotFound
// (a peer the node has no address of), model.ErrRefused,
// model.ErrPeerTimeout or model.ErrPeerFailed.
func (ls *libraryService) ask(ctx context.Context, p peer.ID, req protocol.LibraryRequest) (protocol.LibraryAnswer, error) {
	if err := req.Validate(); err != nil {
		return protocol.LibraryAnswer{}, fmt.Errorf("%w: %v", model.ErrBadRequest, err)
	}
	if p == ls.h.ID() {
		return protocol.LibraryAnswer{}, fmt.Errorf("%w: %s is this household: its list is GET /api/library", model.ErrBadRequest, p)
	}
	if c := ls.h.Network().Connectedness(p); c != network.Connected && c != network.Limited && len(ls.h.Peerstore().Addrs(p)) == 0 {
		return protocol.LibraryAnswer{}, fmt.Errorf("%w: no household %s is connected or known to this one (GET /api/households lists them)", model.ErrNotFound, p)
	}
	ctx, cancel := context.WithTimeout(ctx, libraryAskTimeout)
	defer cancel()
	a, err := onFreshCircuit(ctx, ls.h, p, func() (protocol.LibraryAnswer, error) { return ls.askOnce(ctx, p, req) })
	switch {
	case err == nil:
		ls.names.learn(p, a.Name)
		return a, nil
	case errors.Is(err, errLibraryRefused):
		return a, fmt.Errorf("%w: %s: %w", model.ErrRefused, p, err)
	case ctx.Err() != nil || timedOut(err):
		return a, fmt.Errorf("%w: %s asked for its list: no answer in time (%v)", model.ErrPeerTimeout, p, err)
	}
	return a, fmt.Errorf("%w: %s asked for its list: %w", model.ErrPeerFailed, p, err)
}

// timedOut reports an error of a stream's deadline (which is the
// context's, and may fire a moment before the context says it is done).
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (ls *libraryService) askOnce(ctx context.Context, p peer.ID, req protocol.LibraryRequest) (protocol.LibraryAnswer, error) {
	_, env, err := exchange{protos: ls.protos, write: func(w io.Writer) error { return protocol.WriteLibraryRequest(w, req) }}.run(ctx, ls.h, p)
	if err != nil {
		return protocol.LibraryAnswer{}, err
	}
	if len(env) == 0 {
		return protocol.LibraryAnswer{}, errLibraryRefused
	}
	return protocol.OpenLibrary(env, p, req)
}

// households asks every connected peer that speaks the library protocol
// (at most householdsMax, householdsParallel at once, within
// householdsTimeout) for the first entry of its films: what it calls
// itself, whether it shows its list to this household, and its counts.
func (ls *libraryService) households(ctx context.Context) []model.Household {
	ctx, cancel := context.WithTimeout(ctx, householdsTimeout)
	defer cancel()
	var ps []peer.ID
	for _, p := range ls.h.Network().Peers() {
		if p == ls.h.ID() {
			continue
		}
		if ok, _ := ls.h.Peerstore().SupportsProtocols(p, protocol.LibraryProtocolID); len(ok) > 0 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	ps = ps[:min(len(ps), householdsMax)]
	out := make([]model.Household, len(ps))
	var wg sync.WaitGroup
	sem := make(chan struct{}, householdsParallel)
	for i, p := range ps {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = ls.household(ctx, p)
		})
	}
	wg.Wait()
	return out
}

// household is what p's answer to a one-entry page of its films says.
func (ls *libraryService) household(ctx context.Context, p peer.ID) model.Household {
	h := model.Household{Peer: p.String(), Library: model.LibraryShared}
	a, err := ls.ask(ctx, p, protocol.LibraryRequest{View: protocol.LibraryFilms, Page: 1, Limit: 1})
	switch {
	case err == nil:
		h.Films, h.Shows = a.Films, a.Shows
	case errors.Is(err, model.ErrRefused):
		h.Library = model.LibraryRefused
	default:
		h.Library, h.Error = model.LibraryFailed, err.Error()
	}
	if n := ls.names.of(h.Peer); n != nil {
		h.Name = n[h.Peer]
	}
	return h
}

// libraryRequest is the library protocol's request for q: movies are
// its films, shows its shows, a show's seasons or a season's episodes.
func libraryRequest(q model.HouseholdQuery) protocol.LibraryRequest {
	req := protocol.LibraryRequest{View: protocol.LibraryFilms, Q: q.Q, Page: q.Page, Limit: q.Limit}
	switch {
	case q.Show != "" && q.Season >= 0:
		season := q.Season
		req.View, req.Show, req.Season = protocol.LibraryEpisodes, q.Show, &season
	case q.Show != "":
		req.View, req.Show = protocol.LibrarySeasons, q.Show
	case q.View == model.ViewShows:
		req.View = protocol.LibraryShows
	}
	return req
}

// householdLibrary is p's verified answer a as GET
// /api/households/<p>/library writes it: its views named as
// GET /api/library names them, its films and episodes as files whose
// source is p.
func householdLibrary(p peer.ID, req protocol.LibraryRequest, a protocol.LibraryAnswer) model.HouseholdLibrary {
	views := map[string]string{protocol.LibraryFilms: model.ViewMovies, protocol.LibraryShows: model.ViewShows,
		protocol.LibrarySeasons: "seasons", protocol.LibraryEpisodes: "episodes"}
	out := model.HouseholdLibrary{Peer: p.String(), Name: a.Name, View: views[a.View], Show: a.Show, ShowTitle: a.ShowTitle,
		Season: a.Season, Q: req.Q, Page: a.Page, Pages: a.Pages, Limit: req.Limit, Total: a.Total, Films: a.Films, Shows: a.Shows,
		Entries: make([]model.LibraryEntry, 0, len(a.Entries))}
	for _, e := range a.Entries {
		m := model.LibraryEntry{Kind: e.Kind, Show: e.Show, Seasons: e.Seasons, Episodes: e.Episodes,
			FileSummary: model.FileSummary{Title: e.Title, Year: e.Year, Season: e.Season, Poster: e.Poster}}
		if e.Kind == "film" || e.Kind == "episode" {
			m.Kind = "file"
			m.CID, m.Episode, m.EpisodeTitle, m.Size, m.FileType, m.Source = e.CID, e.Episode, e.EpisodeTitle, e.Size, "video", p.String()
		}
		out.Entries = append(out.Entries, m)
	}
	return out
}
