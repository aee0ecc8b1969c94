package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gabriel-vasile/mimetype"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/dag"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/store"
)

// startShare starts the exchange of files' bytes (bitswap) on the host:
// it answers peers' wants from the libraries for the files the household
// shares (--share-files, its folders, .metamesh-share; never a private
// folder's: node/privacy), and fetches peers' files for /api/file.
func (n *Node) startShare(ctx context.Context) error {
	// The server always runs: what it serves is decided file by file
	// (openShared), and a .metamesh-share may appear at any time.
	x, err := share.Start(ctx, share.Config{
		Host: n.p2p.Host(), Dir: filepath.Join(n.cfg.DataDir, "blocks"),
		Serve: true, Rate: n.cfg.ShareRate,
		Open: n.openShared, IsLocal: n.isLocalRoot, Changed: n.sharedChanged,
		Logger: n.log,
	})
	if err != nil {
		return err
	}
	n.shr = x
	rate := "unlimited"
	if n.cfg.ShareRate > 0 {
		rate = fmt.Sprintf("%.3g MB/s", float64(n.cfg.ShareRate)/1e6)
	}
	switch {
	case n.cfg.ShareFiles:
		n.log.Info("sharing files: peers of the federation may fetch this household's files (--share-files), but those of private folders", "rate", rate)
	case len(n.cfg.ShareFolders) > 0:
		n.log.Info("sharing folders: peers of the federation may fetch the files under these folders (--share-files)", "folders", n.rules.Folders().Shared, "rate", rate)
	}
	return nil
}

// markerChanged is told by the watcher that a sharing marker file
// (.metamesh-share, .metamesh-private) was created, changed or removed
// (ingest.Config.OnMarker, on its loop: it must not block). The rules
// read the markers at every question, so record and search answers
// follow at once; the announcer takes every root again (a file that
// became private is no longer provided, its provides not renewed; one
// that became public is provided), and the files held open for bitswap
// are closed, each opened again, and judged again, at its next want.
func (n *Node) markerChanged(path string) {
	n.rules.Look(path)
	if n.hh != nil {
		n.hh.Recheck()
	}
	if n.shr != nil {
		n.shr.Reopen()
	}
	n.log.Info("sharing marker changed: what peers may have of the folder is judged again", "marker", path)
}

// indexed keeps the block index ingest's hasher recorded for a file.
func (n *Node) indexed(path string, ix *dag.Index) {
	if n.shr == nil || len(ix.Leaves) == 0 {
		return
	}
	last := ix.Leaves[len(ix.Leaves)-1]
	if err := n.shr.Add(context.Background(), ix, last.Offset+int64(last.Size)); err != nil {
		n.log.Warn("share: keeping a file's block index failed; it is indexed again on a peer's first want", "path", path, "err", err)
	}
}

// openShared opens the local file whose IPFS CID is root, checked as
// GET /api/file checks it; share.ErrNotLocal when there is none.
func (n *Node) openShared(ctx context.Context, root cid.Cid) (*share.Local, error) {
	ctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	defer cancel()
	lf, err := n.openLocal(ctx, root.String())
	if err != nil {
		if errors.Is(err, api.ErrNotFound) {
			return nil, fmt.Errorf("%w: %v", share.ErrNotLocal, err)
		}
		return nil, err
	}
	if lf.own.IPFS != root.String() {
		lf.f.Close()
		return nil, fmt.Errorf("%w: %s is not the file's IPFS CID", share.ErrNotLocal, root)
	}
	if !n.rules.Shared(lf.path) {
		// Not shared (a private folder's, or none of the shared ones):
		// to peers it is a file the household does not have.
		lf.f.Close()
		return nil, fmt.Errorf("%w: %s is not shared", share.ErrNotLocal, root)
	}
	return &share.Local{File: lf.f, Name: filepath.Base(lf.path), Path: lf.path}, nil
}

// isLocalRoot reports whether root is the IPFS CID of a local file.
func (n *Node) isLocalRoot(ctx context.Context, root cid.Cid) bool {
	doc, err := n.st.DocumentByCID(ctx, root.String())
	if err != nil {
		// Unknown, or the store cannot say: a store that cannot say
		// keeps the index.
		return !errors.Is(err, store.ErrNotFound)
	}
	if !doc.Local() {
		return false
	}
	own, err := n.st.Own(ctx, doc.Root)
	return err != nil || own.IPFS == root.String()
}

// sharedChanged has ingest hash again a file whose bytes no longer hash
// as indexed (its size and mtime may not have moved).
func (n *Node) sharedChanged(root cid.Cid) {
	ctx, cancel := context.WithTimeout(context.Background(), federation.RequestTimeout)
	defer cancel()
	if doc, err := n.st.DocumentByCID(ctx, root.String()); err == nil && doc.Local() {
		n.ing.Rehash(doc.FilePath())
	}
}

// PeerFile streams the file a CID names, known only from peers, from
// the households that share it (api.PeerFiles).
func (b *backend) PeerFile(ctx context.Context, c string, from api.Caller) (*api.File, error) {
	if err := from.Federate(api.FederatedFetch); err != nil {
		return nil, err
	}
	// A record its bytes disproved is dropped: the CID is looked up
	// again, once, without its signers.
	for again := true; ; again = false {
		pf, err := b.n.peerFile(ctx, c, from)
		if err != nil {
			return nil, err
		}
		f, err := b.n.fetchChecked(ctx, c, pf)
		if errors.Is(err, errDisproved) && again {
			continue
		}
		if errors.Is(err, errDisproved) {
			return nil, fmt.Errorf("%w: %v; no other household's record of it held", api.ErrNotFound, err)
		}
		if err != nil {
			return nil, sourcesError(err, c)
		}
		return &api.File{Content: f, Name: pf.name, Size: int64(f.Size()), MimeType: pf.mime, CID: pf.canonical}, nil
	}
}

// Sources says where the bytes of the file a CID names can come from
// (api.PeerFiles): this household, or the providers that answer a fetch
// of its root.
func (b *backend) Sources(ctx context.Context, c string, from api.Caller) (api.Sources, error) {
	n := b.n
	if lf, err := n.openLocal(ctx, c); err == nil {
		lf.f.Close()
		return api.Sources{CID: lf.doc.CanonicalCID(), IPFS: lf.own.IPFS, Local: true, Available: true, Size: lf.fi.Size(), Providers: []api.Source{}}, nil
	} else if !errors.Is(err, api.ErrNotFound) {
		return api.Sources{}, err
	}
	if err := from.Federate(api.FederatedFetch); err != nil {
		return api.Sources{}, err
	}
	pf, err := n.peerFile(ctx, c, from)
	if err != nil {
		return api.Sources{}, err
	}
	out := api.Sources{CID: pf.canonical, IPFS: pf.roots[0].String(), Providers: []api.Source{}}
	f, err := n.shr.Probe(ctx, pf.roots[0], pf.providers)
	if err != nil {
		var u *share.UnavailableError
		if !errors.As(err, &u) {
			return api.Sources{}, err
		}
		out.Reason = u.Error()
		out.Providers = apiSources(u.Sources)
		return out, nil
	}
	out.Available, out.Size = true, int64(f.Size())
	out.Providers = apiSources(f.Sources())
	f.Close()
	return out, nil
}

// peerFetch is what fetching a peer's file needs.
type peerFetch struct {
	doc       store.Document
	roots     []cid.Cid // the IPFS CIDs it may be fetched by (ipfsCIDsOf), never none
	canonical string
	name      string
	mime      string
	providers []peer.ID
}

// peerFile finds the IPFS CID and the providers of the file CID c names,
// known only from peers (a CID unknown here is looked up among them
// first, as far as from may): the peers its record came from, then the
// DHT's providers of its canonical CID.
func (n *Node) peerFile(ctx context.Context, c string, from api.Caller) (peerFetch, error) {
	sctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
	doc, err := n.st.DocumentByCID(sctx, c)
	cancel()
	if errors.Is(err, store.ErrNotFound) {
		if _, err := n.hh.Meta(ctx, c, false, federate(from, api.FederatedLookup)); err != nil {
			return peerFetch{}, err
		}
		sctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
		doc, err = n.st.DocumentByCID(sctx, c)
		cancel()
	}
	if err != nil {
		return peerFetch{}, federation.APIError(err, c)
	}
	if doc.Local() {
		// This household's file, under a CID it does not serve it by
		// (one peers supplied): the local answer stands.
		lf, err := n.openLocal(ctx, c)
		if err == nil {
			lf.f.Close()
			err = fmt.Errorf("%w: %s is this household's file", api.ErrConflict, c)
		}
		return peerFetch{}, err
	}
	roots := ipfsCIDsOf(doc, c)
	if len(roots) == 0 {
		return peerFetch{}, fmt.Errorf("%w: the records of %s carry no IPFS CID to fetch its blocks by", api.ErrNotFound, c)
	}
	// What the peers said of it, as GET /api/meta shows it.
	fields := doc.Presented()
	pf := peerFetch{doc: doc, roots: roots, canonical: doc.CanonicalCID(), mime: fields["mimeType"]}
	pf.name = fileName(fields, pf.canonical)
	self := n.p2p.Host().ID()
	seen := map[peer.ID]bool{self: true}
	add := func(ids []string) {
		for _, s := range ids {
			if id, err := peer.Decode(s); err == nil && !seen[id] {
				seen[id] = true
				pf.providers = append(pf.providers, id)
			}
		}
	}
	add(n.hh.KnownProviders(ctx, c))
	// The DHT is asked only when no household known to have the file is
	// connected: a player sends a request per seek, and each would
	// otherwise wait on a DHT walk before its first byte.
	if !slices.ContainsFunc(pf.providers, func(p peer.ID) bool {
		return n.p2p.Host().Network().Connectedness(p) == network.Connected
	}) {
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		dht, _ := n.hh.Providers(dctx, pf.canonical)
		cancel()
		add(dht)
	}
	if len(pf.providers) == 0 {
		return peerFetch{}, &api.NotFoundError{CID: c, Providers: []string{}}
	}
	return pf, nil
}

// fileName is the name a peer's file is saved under: "Title (Year)", "Show
// S01E02 Episode" (as its metadata says), else its CID; then the
// extension of its MIME type.
func fileName(fields map[string]string, canonical string) string {
	sum := store.SummaryOfFields(fields)
	name := sum.Title
	switch {
	case name == "":
	case sum.Season != nil && sum.Episode != nil:
		name = strings.TrimSpace(fmt.Sprintf("%s S%02dE%02d %s", name, *sum.Season, *sum.Episode, sum.EpisodeTitle))
	case sum.Year > 0:
		name = fmt.Sprintf("%s (%d)", name, sum.Year)
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, strings.TrimSpace(name))
	if name == "" {
		name = canonical
	}
	if m := mimetype.Lookup(fields["mimeType"]); m != nil {
		name += m.Extension()
	}
	return name
}

// sourcesError is a fetch's error as the API's.
func sourcesError(err error, c string) error {
	var u *share.UnavailableError
	if errors.As(err, &u) {
		return &api.SourcesError{Msg: u.Error(), Providers: apiSources(u.Sources)}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: fetching %s: %v", api.ErrUnavailable, c, err)
	}
	return err
}

func apiSources(ss []share.Source) []api.Source {
	out := make([]api.Source, 0, len(ss))
	for _, s := range ss {
		out = append(out, api.Source{Peer: s.Peer, State: s.State})
	}
	return out
}
