package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/node/thumbs"
	"github.com/metamesh/node/store"
)

// federation.RequestTimeout bounds the Redis calls of one API request, go-redis's
// retries included: a Redis that does not answer (stopped, swapping)
// gives a 503 after this long instead of holding the client for the
// read timeouts of every retry.

// backend is the api.Backend of a node.
type backend struct{ n *Node }

// Meta answers from the local store and, unless local, the federation,
// as far as from may make the node ask its peers. A lookup refused for
// that is counted by the API (metamesh_api_rate_limited_total), not as a
// lookup.
func (b *backend) Meta(ctx context.Context, cid string, local bool, from api.Caller) (api.Document, error) {
	start := time.Now()
	doc, err := b.n.hh.Meta(ctx, cid, local, federate(from, api.FederatedLookup))
	if b.n.met != nil && !errors.As(err, new(*api.RateLimitedError)) {
		b.n.met.lookup(doc, err, time.Since(start))
	}
	return doc, err
}

// CachedAnswer is the kept encoded answer of a local file's cached
// document for cid as written (api.AnswerCache), counted as a local
// lookup found.
func (b *backend) CachedAnswer(cid string) ([]byte, bool) {
	start := time.Now()
	body := b.n.st.CachedMemo(cid).Load()
	if body == nil {
		return nil, false
	}
	if b.n.met != nil {
		b.n.met.localFound(time.Since(start))
	}
	return body, true
}

func status404(err error) bool { return errors.Is(err, api.ErrNotFound) }

// Providers lists the peers the DHT returns for cid.
func (b *backend) Providers(ctx context.Context, cid string) ([]string, error) {
	return b.n.hh.Providers(ctx, cid)
}

// Peers lists the connected peers: how the node is connected to each
// (direct, or only through a relay), over which transport, and the
// connections' remote addresses.
func (b *backend) Peers(ctx context.Context) ([]api.Peer, error) {
	h := b.n.p2p.Host()
	out := []api.Peer{}
	for _, p := range h.Network().Peers() {
		conns := h.Network().ConnsToPeer(p)
		pi := api.Peer{ID: p.String(), Addrs: []string{}, Connection: "relayed"}
		var best network.Conn
		for _, c := range conns {
			pi.Addrs = append(pi.Addrs, c.RemoteMultiaddr().String())
			if best == nil || (p2p.Relayed(best) && !p2p.Relayed(c)) {
				best = c // streams take a direct connection first
			}
		}
		if best != nil {
			pi.Transport = transportOf(best.RemoteMultiaddr())
			if !p2p.Relayed(best) {
				pi.Connection = "direct"
			} else if id, err := relayOf(best.RemoteMultiaddr()); err == nil {
				pi.Relay = id.String()
			}
		}
		if l := h.Peerstore().LatencyEWMA(p); l > 0 {
			pi.LatencyMs = float64(l.Microseconds()) / 1000
		}
		out = append(out, pi)
	}
	ids := make([]string, len(out))
	for i, p := range out {
		ids[i] = p.ID
	}
	names := b.n.hh.PeerNames(ids...)
	for i := range out {
		out[i].Name = names[out[i].ID]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (b *backend) Status(ctx context.Context) (api.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	defer cancel()
	n := b.n
	ps := n.hh.ProvideStats()
	st := api.Status{
		Version:      Version,
		Name:         n.cfg.Name,
		PeerID:       n.p2p.Host().ID().String(),
		Addrs:        n.p2p.Addrs(),
		Libraries:    n.cfg.Libraries,
		Scan:         n.ing.Progress(),
		Peers:        len(n.p2p.Host().Network().Peers()),
		ProvideQueue: int(ps.Queued),
		Provide:      &ps,
		HashQueue:    n.ing.QueueLen(),
		Redis:        api.RedisStatus{OK: true, Managed: n.st.Server() != nil},
		Files:        n.cat.Counts(),
		Relays:       []api.Relay{},
	}
	net := n.p2p.Status()
	st.RelayService = net.RelayService
	folders := n.rules.Folders()
	st.Sharing = api.Sharing{Enabled: n.cfg.ShareFiles, Rate: n.cfg.ShareRate, Folders: folders.Shared, Private: folders.Private, Art: !n.cfg.NoShareArt}
	if st.Sharing.Folders == nil {
		st.Sharing.Folders = []string{}
	}
	if st.Sharing.Private == nil {
		st.Sharing.Private = []string{}
	}
	st.Reachability, st.ReachableAddrs = net.Reachability, multiaddrStrings(net.ReachableAddrs)
	st.ReachabilityBasis = net.Basis
	st.ObservedAddrs = multiaddrStrings(net.ObservedAddrs)
	for _, ri := range net.Relays {
		r := api.Relay{ID: ri.ID.String(), Reserved: ri.Reserved, Addrs: []string{}, Error: ri.Err}
		for _, a := range ri.Addrs { // as peers dial them, like addrs
			r.Addrs = append(r.Addrs, a.String()+"/p2p/"+st.PeerID)
		}
		if ri.Reserved {
			r.Expires = ri.Expires.UTC().Format(time.RFC3339)
		}
		st.Relays = append(st.Relays, r)
	}
	if srv := n.st.Server(); srv != nil {
		st.Redis.Addr = srv.Addr()
	}
	st.DataDir = n.space.state()
	st.Problems = n.problems()
	roots, err := n.st.Roots(ctx)
	if err == nil {
		st.LibraryFiles, err = n.st.LocalPaths(ctx)
	}
	if err != nil {
		if store.IsUnavailable(err) {
			err = federation.RedisDown(err)
		}
		st.Redis.OK, st.Redis.Error = false, err.Error()
	}
	st.Roots = roots
	return st, nil
}

// Ready says first what keeps the node from serving fully (problems),
// then whether Redis answers, ingest is stuck or the first scan runs.
func (b *backend) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	defer cancel()
	if ps := b.n.problems(); len(ps) > 0 {
		return errors.New(strings.Join(ps, "; "))
	}
	if err := b.n.st.Ping(ctx); err != nil {
		return federation.RedisDown(err)
	}
	if p, since, stuck := b.n.ing.Stuck(); stuck {
		return fmt.Errorf("ingest is stuck: a worker has been on %s since %s without a byte hashed (a read blocked on a hung mount?)", p, since.UTC().Format(time.RFC3339))
	}
	switch s := b.n.ing.Progress().State; s {
	case ingest.StateWatching, ingest.StatePolling, ingest.StateIdle:
		return nil
	default:
		return fmt.Errorf("initial scan not finished (%s)", s)
	}
}

// problems are what keeps the node from serving fully, each in words a
// household can act on (Status.Problems, and GET /ready's reason): a
// full data directory (space.go), each unavailable library ("library
// unavailable: /media/films: its directory is gone (moved, deleted or
// unmounted)"). Never nil.
func (n *Node) problems() []string {
	out := []string{}
	if p := n.space.problem(); p != "" {
		out = append(out, p)
	}
	if n.ing != nil {
		for _, l := range n.ing.Libraries() {
			if !l.Available {
				out = append(out, (&ingest.LibraryUnavailableError{Dir: l.Dir}).Error()+": "+l.Reason)
			}
		}
	}
	return out
}

// Thumbnail finds made, or makes, the thumbnail of the image c names,
// keyed by c: a thumbnail made once is served from the disk without a
// store read (a page asks for 50 at once), and only one not made yet
// opens the image: a video's still under DATA/stills (stills.go), else
// the local file, as File opens it; an image known only from peers (a
// peer's file's poster) is fetched from them once (art.go).
func (b *backend) Thumbnail(ctx context.Context, c string, width int, from api.Caller) (string, error) {
	path, err := b.n.thumbs.Get(ctx, c, width, func() (io.ReadCloser, error) {
		if f, ok, err := b.n.openStill(c); ok || err != nil {
			return f, err
		}
		f, err := b.File(ctx, c)
		if err != nil {
			return nil, err
		}
		return f.Content, nil
	})
	if errors.Is(err, api.ErrNotFound) {
		// Fetched before the thumbnail is made, so that a slow peer
		// holds none of the cache's decoders.
		path, err = b.n.peerThumbnail(ctx, c, width, from)
	}
	if errors.Is(err, thumbs.ErrNotImage) || errors.Is(err, thumbs.ErrTooLarge) {
		return "", fmt.Errorf("%w: %s: %w", api.ErrUnprocessable, c, err)
	}
	return path, err
}

// File opens the local file c names for the API: only a confirmed file
// (its sha2-256 computed from its own bytes), only through an os.Root of
// the library that holds its path (a symlink out, ".." or a path outside
// every library is not found), and only while its size and mtime are
// still those that were hashed; otherwise a conflict, and the ingester is
// asked to look at the path again. A file of an unavailable library is
// an ingest.ErrLibraryUnavailable (503). Its bytes are checked as they
// are read (file_check.go): a file changed in place under the same size
// and mtime fails the read of the first block that differs, and is
// hashed again.
func (b *backend) File(ctx context.Context, c string) (*api.File, error) {
	ctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	defer cancel()
	n := b.n
	lf, err := n.openLocal(ctx, c)
	if err != nil {
		return nil, err
	}
	content, err := n.checkedContent(ctx, lf)
	if err != nil {
		lf.f.Close()
		return nil, err
	}
	return &api.File{Content: content, Name: filepath.Base(lf.path), Size: lf.fi.Size(), ModTime: lf.fi.ModTime(),
		MimeType: lf.doc.Fields["mimeType"], CID: lf.doc.CanonicalCID()}, nil
}

// localFile is a library file opened to serve its bytes.
type localFile struct {
	f    *os.File
	fi   os.FileInfo
	path string
	doc  store.Document
	own  store.Hashes
}

// openLocal opens the local file CID c names, once its sha2-256 is
// confirmed, only under a CID the node computed from its bytes and only
// inside a library; a file whose size or mtime moved since it was hashed
// is refused and taken in again. Errors are the API's (File's).
func (n *Node) openLocal(ctx context.Context, c string) (*localFile, error) {
	doc, err := n.st.DocumentByCID(ctx, c)
	if err != nil {
		return nil, federation.APIError(err, c)
	}
	p := doc.FilePath()
	if p == "" {
		return nil, &api.NotFoundError{CID: c, Providers: n.hh.KnownProviders(ctx, c)}
	}
	ps, err := n.st.Path(ctx, p)
	if err != nil {
		return nil, federation.APIError(err, c)
	}
	own, err := n.st.Own(ctx, doc.Root)
	if err != nil {
		return nil, federation.APIError(err, c)
	}
	if !ps.Hashed || own.SHA256 == "" {
		return nil, fmt.Errorf("%w: %s is not confirmed yet (only its midhash is known); retry once its full hash is done", api.ErrConflict, c)
	}
	// Bytes go out only under a CID this node computed from them: members
	// peers supplied are their claims, which the node cannot vouch for.
	if c != own.Midhash && c != own.SHA256 && c != own.IPFS {
		return nil, fmt.Errorf("%w: %s came from peers' records of the file, not from its bytes here; this node serves it as %s", api.ErrNotFound, c, own.SHA256)
	}
	lib, _, ok := n.libraryOf(p)
	if !ok {
		return nil, fmt.Errorf("%w: no file with CID %s inside the libraries", api.ErrNotFound, c)
	}
	// A library that went away (unmounted, moved, not answering) is no
	// file gone: its bytes are unavailable (503), its record stays.
	if err := n.ing.Unavailable(lib); err != nil {
		return nil, err
	}
	f, fi, err := ingest.OpenInLibrary(lib, p)
	if err != nil {
		if err := n.ing.CheckLibrary(lib); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: the file is not readable inside its library: %v", api.ErrNotFound, c, err)
	}
	if fi.Size() != ps.Size || fi.ModTime().UnixNano() != ps.MtimeNs {
		f.Close()
		n.ing.Touch(p)
		return nil, fmt.Errorf("%w: %s changed on disk since it was hashed (size %d, was %d); it is being hashed again", api.ErrConflict, c, fi.Size(), ps.Size)
	}
	return &localFile{f: f, fi: fi, path: p, doc: doc, own: own}, nil
}

// libraryOf returns the library holding the absolute path p and p
// relative to it; false when p is outside every library (".." included).
func (n *Node) libraryOf(p string) (lib, rel string, ok bool) {
	for _, l := range n.cfg.Libraries {
		r, err := filepath.Rel(l, p)
		if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
			continue
		}
		return l, r, true
	}
	return "", "", false
}

// Events follows meta:events for the API after the stream ID after, or
// from the newest entry when after is "".
func (b *backend) Events(ctx context.Context, after string) (api.EventStream, error) {
	rctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	defer cancel()
	if after == "" {
		head, err := b.n.st.FeedHead(rctx)
		if err != nil {
			return nil, federation.APIError(err, "")
		}
		after = head
	} else if err := b.n.st.CheckFeedPosition(rctx, after); errors.Is(err, store.ErrFeedAhead) {
		return nil, fmt.Errorf("%w: Last-Event-ID %s is newer than the newest event: not an id this endpoint sent", api.ErrBadRequest, after)
	} else if err != nil {
		return nil, federation.APIError(err, "")
	}
	return &eventStream{st: b.n.st, feed: b.n.st.Feed(after), closing: b.n.closing}, nil
}

// eventStream maps store events to API events: root IDs never leave the
// node, so a key-set event's root (and a merge's Into) is sent as the
// root's canonical CID at send time.
type eventStream struct {
	st      *store.Store
	feed    *store.Feed
	closing <-chan struct{}
}

func (e *eventStream) Position() string { return e.feed.Position() }

func (e *eventStream) Next(ctx context.Context, wait time.Duration) ([]api.Event, error) {
	select {
	case <-e.closing:
		return nil, api.ErrClosing
	default:
	}
	evs, err := e.feed.Next(ctx, 100, wait)
	select {
	case <-e.closing:
		return nil, api.ErrClosing
	default:
	}
	if errors.Is(err, store.ErrFeedTrimmed) {
		return nil, fmt.Errorf("%w: %v", api.ErrEventsTrimmed, err)
	}
	if err != nil {
		return nil, federation.APIError(err, "")
	}
	// A path event names no root: the file is the one its path holds now,
	// or, for a path that is gone, the local file its midhash still names.
	// The paths of the batch's path events are read in one pipeline, and
	// the canonical CIDs of every root and midhash the batch names in one
	// script (store.CanonicalCIDs), not a document each.
	var paths []string
	for _, ev := range evs {
		if ev.Root == "" && ev.Lifecycle() && ev.Path != "" {
			paths = append(paths, ev.Path)
		}
	}
	states := map[string]store.PathState{}
	if len(paths) > 0 {
		states, _ = e.st.Paths(ctx, paths) // unread, an event goes without its CID
	}
	var roots []store.RootID
	var mids []string
	for _, ev := range evs {
		roots = append(roots, ev.Root, ev.Into)
		if ev.Root == "" && ev.Lifecycle() && ev.Path != "" {
			if st, ok := states[ev.Path]; ok {
				roots = append(roots, st.Root)
			} else if ev.Midhash != "" {
				mids = append(mids, ev.Midhash)
			}
		}
	}
	roots = slices.DeleteFunc(roots, func(r store.RootID) bool { return r == "" })
	slices.Sort(roots)
	slices.Sort(mids)
	byRoot, byMid, _ := e.st.CanonicalCIDs(ctx, slices.Compact(roots), slices.Compact(mids)) // unread: events without CIDs
	cidOf := func(r store.RootID) string { return byRoot[r] }
	pathCID := func(ev store.Event) string {
		if ev.Path == "" {
			return ""
		}
		if st, ok := states[ev.Path]; ok {
			return cidOf(st.Root)
		}
		return byMid[ev.Midhash]
	}
	out := make([]api.Event, 0, len(evs))
	for _, ev := range evs {
		c := cidOf(ev.Root)
		if ev.Root == "" && ev.Lifecycle() {
			c = pathCID(ev)
		}
		out = append(out, api.Event{ID: ev.ID, Type: ev.Type, Path: ev.Path, OldPath: ev.OldPath,
			PathBytes: exactBytes(ev.Path), OldPathBytes: exactBytes(ev.OldPath),
			CID: c, Added: ev.Added, Removed: ev.Removed, Into: cidOf(ev.Into), Timestamp: ev.Timestamp})
	}
	return out, nil
}

// exactBytes is p's bytes when p is not valid UTF-8 (JSON would replace
// the invalid bytes), nil otherwise.
func exactBytes(p string) []byte {
	if utf8.ValidString(p) {
		return nil
	}
	return []byte(p)
}

// Search answers GET /api/search: the local index, and with federated
// connected peers' answers as far as from may make the node ask them
// (search.go).
func (b *backend) Search(ctx context.Context, q string, limit int, cursor string, federated bool, from api.Caller) (api.SearchResult, error) {
	return b.n.hh.SearchPage(ctx, q, limit, cursor, federated, federate(from, api.FederatedSearch))
}

// federate is the federation's permission to do network work what on
// from's behalf: from.Federate, which the federation calls only when that
// work starts (a stranger's token is taken then, not for an answer the
// store holds).
func federate(from api.Caller, what api.Federated) func() error {
	return func() error { return from.Federate(what) }
}

// Library answers GET /api/library from the catalog (catalog.go): no
// Redis read; the names of the peers its entries come from beside.
func (b *backend) Library(_ context.Context, q api.LibraryQuery) (api.LibraryPage, error) {
	page, err := b.n.cat.Page(q)
	if err != nil {
		return page, err
	}
	var sources []string
	for _, e := range page.Entries {
		if e.Source != "" && e.Source != "local" {
			sources = append(sources, e.Source)
		}
	}
	page.PeerNames = b.n.hh.PeerNames(sources...)
	return page, nil
}

// relayOf is the relay of a /…/p2p/<relay>/p2p-circuit address.
func relayOf(m ma.Multiaddr) (peer.ID, error) {
	var id peer.ID
	for _, c := range m {
		switch c.Protocol().Code {
		case ma.P_P2P:
			pid, err := peer.IDFromBytes(c.RawValue())
			if err != nil {
				return "", err
			}
			id = pid
		case ma.P_CIRCUIT:
			if id == "" {
				return "", errors.New("no relay before /p2p-circuit")
			}
			return id, nil
		}
	}
	return "", errors.New("not a relayed address")
}

// transportOf names the transport of m: "quic-v1", "tcp", "webtransport",
// … (of the first hop, for a relayed address).
func transportOf(m ma.Multiaddr) string {
	name := ""
	for _, c := range m {
		switch c.Protocol().Code {
		case ma.P_TCP, ma.P_UDP:
			name = c.Protocol().Name
		case ma.P_QUIC_V1, ma.P_QUIC, ma.P_WEBTRANSPORT, ma.P_WEBRTC_DIRECT, ma.P_WS, ma.P_WSS:
			name = c.Protocol().Name
		case ma.P_P2P, ma.P_CIRCUIT:
			return name
		}
	}
	return name
}

// multiaddrStrings are ms as text, never nil.
func multiaddrStrings(ms []ma.Multiaddr) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.String())
	}
	return out
}

// Edit writes the household's own values of a local file's fields
// (api.Editor) and answers the file's document after, from the store.
func (b *backend) Edit(ctx context.Context, cid string, set map[string]string, del []string) (api.Document, error) {
	root, _, err := b.n.st.Edit(ctx, cid, set, del)
	switch {
	case errors.Is(err, store.ErrReservedField):
		return api.Document{}, fmt.Errorf("%w: %w", api.ErrForbidden, err)
	case errors.Is(err, store.ErrTooLarge):
		return api.Document{}, fmt.Errorf("%w: %w", api.ErrTooLarge, err)
	case errors.Is(err, store.ErrInvalidField):
		return api.Document{}, fmt.Errorf("%w: %w", api.ErrBadRequest, err)
	case errors.Is(err, store.ErrNotLocal):
		return api.Document{}, fmt.Errorf("%w: %w", api.ErrConflict, err)
	case errors.Is(err, store.ErrNotFound):
		return api.Document{}, fmt.Errorf("%w: %w", api.ErrNotFound, err)
	case err != nil:
		return api.Document{}, err
	}
	// The household's lists show its edit as soon as it is answered (a
	// show it named is listed), not once the change feed gets to it;
	// the feed brings it again, the same.
	if ch, err := b.n.st.ReadChanged(ctx, []store.RootID{root}); err == nil {
		b.n.cat.Take(ctx, store.ChangeBatch{Roots: ch})
	}
	return b.n.hh.Meta(ctx, cid, true, nil)
}
