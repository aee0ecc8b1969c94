package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/artcache"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/share"
	"github.com/metamesh/node/node/thumbs"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// Artwork travels: GET /api/thumb of an image the household does not hold
// (a peer's file's poster) fetches it from the households whose records
// name it, as GET /api/file of a peer's file does, keeps the original
// under DATA/art (package artcache) and makes its thumbnail as for a
// local image. A household serves the blocks of the images that are
// artwork of the files it announces even when it does not share its
// files (--share-art, on by default): a poster says no more than the
// title it already announces.

// artFetches is how many images are fetched from peers at once.
const artFetches = 4

// artRetry is how long a CID whose fetch failed is answered with that
// failure rather than fetched again (a page asks for its posters on
// every load).
const artRetry = 2 * time.Minute

// artFetchTimeout bounds a fetch of an image, the lookup of its record
// and its providers included.
const artFetchTimeout = 30 * time.Second

// maxArtFailures bounds the failures remembered.
const maxArtFailures = 4096

// maxArtNeighbours bounds the paths near an image looked at for a file
// that links it as its artwork.
const maxArtNeighbours = 256

// errArtNotServed: no household that names an image serves its bytes.
var errArtNotServed = errors.New("no household that names this artwork serves it")

// peerArt fetches peers' artwork into the cache, a few at a time.
type peerArt struct {
	cache *artcache.Cache
	sem   chan struct{}

	mu     sync.Mutex
	busy   map[string]*artFetch
	failed map[string]artFailure
	warned map[string]bool // peers whose refusal to serve art was logged
}

type artFetch struct {
	done chan struct{}
	path string
	err  error
}

type artFailure struct {
	err   error
	until time.Time
}

// openArt opens the cache of peers' artwork under DATA/art.
func (n *Node) openArt() error {
	c, err := artcache.Open(filepath.Join(n.cfg.DataDir, "art"), n.cfg.ArtCache)
	if err != nil {
		return err
	}
	n.art = &peerArt{cache: c, sem: make(chan struct{}, artFetches), busy: map[string]*artFetch{},
		failed: map[string]artFailure{}, warned: map[string]bool{}}
	return nil
}

// peerThumbnail is the thumbnail of a peer's image c names: the image
// fetched once into the art cache, its thumbnail made as a local one's.
func (n *Node) peerThumbnail(ctx context.Context, c string, width int, from api.Caller) (string, error) {
	p, err := n.art.get(ctx, n, c, from)
	if err != nil {
		return "", err
	}
	return n.thumbs.Get(ctx, c, width, func() (io.ReadCloser, error) { return os.Open(p) })
}

// get is the path of the peer's image c names in the cache, fetched
// when the cache does not hold it; a failure is answered again for
// artRetry without a fetch.
func (a *peerArt) get(ctx context.Context, n *Node, c string, from api.Caller) (string, error) {
	if p, ok := a.cache.Path(c); ok {
		return p, nil
	}
	if err := from.Federate(api.FederatedFetch); err != nil {
		return "", err
	}
	a.mu.Lock()
	if f, ok := a.failed[c]; ok && time.Now().Before(f.until) {
		a.mu.Unlock()
		return "", f.err
	}
	fe := a.busy[c]
	if fe == nil {
		fe = &artFetch{done: make(chan struct{})}
		a.busy[c] = fe
		a.mu.Unlock()
		// The fetch is not the first asker's alone: others wait on it,
		// so it runs to its end (or artFetchTimeout) whatever the
		// asker does meanwhile.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), artFetchTimeout)
		fe.path, fe.err = a.fetch(fctx, n, c, from)
		cancel()
		a.mu.Lock()
		delete(a.busy, c)
		if fe.err != nil {
			if len(a.failed) >= maxArtFailures {
				clear(a.failed)
			}
			a.failed[c] = artFailure{err: fe.err, until: time.Now().Add(artRetry)}
		}
		a.mu.Unlock()
		close(fe.done)
		return fe.path, fe.err
	}
	a.mu.Unlock()
	select {
	case <-fe.done:
		return fe.path, fe.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// fetch fetches the image c names from the households whose records name
// it, refusing one over artcache.MaxImage (by its record's size before
// the fetch, by its root's when it comes, by the bytes read), checks the
// bytes against c and keeps them.
func (a *peerArt) fetch(ctx context.Context, n *Node, c string, from api.Caller) (string, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-a.sem }()
	pf, err := n.peerFile(ctx, c, from)
	if errors.Is(err, api.ErrNotFound) {
		// No record describes a still: the records of the videos that
		// name it as theirs say who holds it.
		if spf, ok := n.peerStill(ctx, c); ok {
			pf, err = spf, nil
		}
	}
	if err != nil {
		return "", err
	}
	fields := pf.doc.Presented()
	if size, err := strconv.ParseInt(fields["sizeByte"], 10, 64); err == nil && size > artcache.MaxImage {
		return "", fmt.Errorf("%w: %s is %d bytes by its record: %w", thumbs.ErrTooLarge, c, size, artcache.ErrTooLarge)
	}
	if m := fields["mimeType"]; m != "" && !strings.HasPrefix(m, "image/") {
		return "", fmt.Errorf("%w: %s is %s by its record", thumbs.ErrNotImage, c, m)
	}
	var lastErr error
	for _, root := range pf.roots {
		p, err := a.fetchRoot(ctx, n, c, root, pf)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, thumbs.ErrTooLarge) || errors.Is(err, context.Canceled) {
			return "", err
		}
		lastErr = err
	}
	return "", lastErr
}

// fetchRoot fetches c's bytes by its IPFS CID root and keeps them once
// they hold to c.
func (a *peerArt) fetchRoot(ctx context.Context, n *Node, c string, root cid.Cid, pf peerFetch) (string, error) {
	k, err := checkOf(c, root)
	if err != nil {
		return "", err
	}
	f, err := n.shr.Fetch(ctx, root, pf.providers)
	if err != nil {
		a.notServed(n, c, err)
		return "", artError(err, c)
	}
	defer f.Close()
	if f.Size() > artcache.MaxImage {
		return "", fmt.Errorf("%w: %s is %d bytes: %w", thumbs.ErrTooLarge, c, f.Size(), artcache.ErrTooLarge)
	}
	p, err := a.cache.Put(c, f, func(b []byte) error { return n.artHolds(c, root, k, b, pf) })
	if errors.Is(err, artcache.ErrTooLarge) {
		return "", fmt.Errorf("%w: %s: %w", thumbs.ErrTooLarge, c, err)
	}
	return p, err
}

// artHolds checks b, the bytes fetched by root, against c (check k) as
// trust.go checks a peer's file: the blocks are root's (bitswap checked
// each), the pairing of c with root must hold to them. A pairing they
// disprove drops the record that made it and marks its signers.
func (n *Node) artHolds(c string, root cid.Cid, k check, b []byte, pf peerFetch) error {
	var got cid.Cid
	var err error
	switch k {
	case checkNone:
		return nil
	case checkMidhash:
		got, err = protocol.Midhash256(bytes.NewReader(b), int64(len(b)))
	case checkSHA256:
		sum := sha256.Sum256(b)
		got, err = protocol.SHA256CID(sum[:])
	}
	if err != nil {
		return err
	}
	if got.String() == c {
		return nil
	}
	liars := vouchers(pf.doc, c, root.String())
	n.pairs.disproved.Add(1)
	n.hh.Disproved(liars...)
	n.log.Warn("peers paired an artwork's CID with another image's bytes: not kept; their record is dropped and they are not believed for a day",
		"cid", c, "ipfs", root, "peers", liars)
	dctx, cancel := context.WithTimeout(context.Background(), federation.RequestTimeout)
	defer cancel()
	if err := n.st.DeleteRoot(dctx, pf.doc.Root); err != nil && !errors.Is(err, store.ErrNotFound) {
		n.log.Warn("dropping a record its bytes disproved failed", "cid", c, "err", err)
	}
	return fmt.Errorf("%w: %s's bytes are not %s's", api.ErrNotFound, root, c)
}

// notServed logs, once per peer, a household that names artwork it
// does not serve.
func (a *peerArt) notServed(n *Node, c string, err error) {
	var u *share.UnavailableError
	if !errors.As(err, &u) {
		return
	}
	for _, s := range u.Sources {
		if s.State != "does not share" {
			continue
		}
		a.mu.Lock()
		first := !a.warned[s.Peer]
		if first {
			a.warned[s.Peer] = true
		}
		a.mu.Unlock()
		if first {
			n.log.Warn("a peer names artwork it does not serve (it may run --share-art=false): its files show placeholders for their posters here",
				"peer", s.Peer, "name", n.hh.PeerNames(s.Peer)[s.Peer], "cid", c)
		}
	}
}

// artError is a failed fetch of artwork as the API's: which households
// named it and did not serve it (503).
func artError(err error, c string) error {
	var u *share.UnavailableError
	if !errors.As(err, &u) {
		return sourcesError(err, c)
	}
	var said []string
	for _, s := range u.Sources {
		why, ok := map[string]string{"does not share": "does not serve it (it may run --share-art=false)",
			"relayed": "is reached only through a relay", "unreachable": "could not be reached",
			"no answer": "did not answer in time", "shares": "did not send it in time"}[s.State]
		if !ok {
			why = s.State
		}
		said = append(said, fmt.Sprintf("peer %s %s", s.Peer, why))
	}
	return &api.SourcesError{Msg: fmt.Sprintf("%v (%s): %s", errArtNotServed, c, strings.Join(said, "; ")), Providers: apiSources(u.Sources)}
}

// servesArt reports whether lf, a local file a peer wants the blocks of
// and that the household does not share, is served as artwork
// (--share-art): an image of at most artcache.MaxImage bytes, not
// private, that a local file the household announces links as its
// artwork (art/<kind>, still).
func (n *Node) servesArt(ctx context.Context, lf *localFile) bool {
	if n.cfg.NoShareArt || !n.announced(lf.path) || lf.fi.Size() > artcache.MaxImage {
		return false
	}
	if !strings.HasPrefix(lf.doc.Fields["mimeType"], "image/") && lf.doc.Fields[store.SidecarField] != "art" {
		return false
	}
	return n.linkedAsArt(ctx, lf.doc)
}

// linkedAsArt reports whether a local file that the household announces
// links the local image img as its artwork. Ingest links a video's
// artwork from its folder or the folder above (a show's), so the files
// looked at are those of img's folder and of the folders in it.
func (n *Node) linkedAsArt(ctx context.Context, img store.Document) bool {
	canonical := img.CanonicalCID()
	p := img.FilePath()
	dir := filepath.Dir(p)
	found, err := n.st.PathsWithPrefixes(ctx, []string{dir + string(filepath.Separator)}, maxArtNeighbours)
	if err != nil || len(found) == 0 {
		return false
	}
	var near []string
	for _, q := range found[0] {
		if q != p && (filepath.Dir(q) == dir || filepath.Dir(filepath.Dir(q)) == dir) {
			near = append(near, q)
		}
	}
	// The files beside the image first.
	slices.SortStableFunc(near, func(a, b string) int {
		return boolInt(filepath.Dir(a) != dir) - boolInt(filepath.Dir(b) != dir)
	})
	states, err := n.st.Paths(ctx, near)
	if err != nil {
		return false
	}
	seen := map[store.RootID]bool{img.Root: true}
	for _, q := range near {
		st, ok := states[q]
		if !ok || seen[st.Root] {
			continue
		}
		seen[st.Root] = true
		d, err := n.st.Document(ctx, st.Root)
		if err != nil || !d.Local() || !n.announced(d.FilePath()) {
			continue
		}
		// The file's own fields: a link ingest made, not one a peer's
		// record shows on the file (origin/<peer>/art/…).
		for f, v := range d.Fields {
			if v == canonical && (strings.HasPrefix(f, "art/") || f == "still") {
				return true
			}
		}
	}
	return false
}

// announced reports whether the household announces the local file at
// path to its peers (it is not in a private folder, node/privacy): its
// artwork is served only then.
func (n *Node) announced(path string) bool { return !n.rules.Private(path) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// peerStill is where a peer's still c may be fetched from: the
// households whose records of a file the catalog shows with c (origin/
// <peer>/still) say it is theirs, by c itself, the still's IPFS CID;
// false when no such record is known.
func (n *Node) peerStill(ctx context.Context, c string) (peerFetch, bool) {
	root, err := cid.Decode(c)
	if err != nil || n.cat == nil {
		return peerFetch{}, false
	}
	seen := map[peer.ID]bool{n.p2p.Host().ID(): true}
	// The record is the video's, not the still's: the still's size and
	// type are checked on its bytes.
	pf := peerFetch{doc: store.Document{Fields: map[string]string{}}, roots: []cid.Cid{root}, canonical: c, mime: "image/jpeg", name: c + ".jpg"}
	for _, r := range n.cat.Showing(c, 8) {
		sctx, cancel := context.WithTimeout(ctx, federation.RequestTimeout)
		d, err := n.st.Document(sctx, r)
		cancel()
		if err != nil {
			continue
		}
		for f, v := range d.Fields {
			rest, ok := strings.CutPrefix(f, store.OriginPrefix+"/")
			if !ok || v != c {
				continue
			}
			p, name, _ := strings.Cut(rest, "/")
			id, err := peer.Decode(p)
			if name != store.StillField || err != nil || seen[id] {
				continue
			}
			seen[id] = true
			pf.providers = append(pf.providers, id)
		}
	}
	return pf, len(pf.providers) > 0
}
