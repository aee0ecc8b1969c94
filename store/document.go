package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// MaxDuplicates bounds the duplicates a document lists; DuplicateCount
// says how many there are in all.
const MaxDuplicates = 100

// Document is one root's metadata, read in O(fields of the root).
type Document struct {
	// Root is the root the document was read from (never shown to peers
	// or API clients).
	Root RootID
	// Fields are the flat properties, schema fields (filePath, sizeByte,
	// mtime) included and the CID key-set excluded.
	Fields map[string]string
	// CIDs is the key-set, sorted.
	CIDs []string
	// Duplicates are other local paths with the same content: the
	// MaxDuplicates smallest, sorted.
	Duplicates []string
	// DuplicateCount is the number of duplicates, listed or not.
	DuplicateCount int64
	// Peers are the peers that supplied members or fields (peers:<root>),
	// sorted.
	Peers []string
	// Edited are the fields whose values are the household's own edits
	// (edited:<root>, Store.Edit), sorted: no extraction overwrites them.
	Edited []string
	// Learned are the members the root holds only because peers' records
	// carried them (learned:<root>), each with the peers that vouch for it,
	// sorted. The node does not vouch for them: Vouched leaves them out.
	Learned map[string][]string

	// memo is shared by the copies of one cached document (nil when the
	// document was read from Redis and not kept).
	memo *Memo
	// friends is the store's Options.Friends (Shown's tie-break).
	friends func(peer string) bool
}

// Memo holds the encoded answer a reader made of a cached document (GET
// /api/meta's JSON body), for the next reader of the same cached
// document: the document is dropped from the cache, memo and all,
// whenever anything it was read from changes, so what the memo holds is
// never stale.
type Memo struct{ v atomic.Pointer[[]byte] }

// Load returns what Store kept, nil before.
func (m *Memo) Load() []byte {
	if m == nil {
		return nil
	}
	if p := m.v.Load(); p != nil {
		return *p
	}
	return nil
}

// Store keeps b (not copied: the caller gives it up).
func (m *Memo) Store(b []byte) {
	if m != nil {
		m.v.Store(&b)
	}
}

// Memo is the document's memo: shared by every read of the same cached
// document, nil (Load answers nil, Store does nothing) for a document
// not from the cache.
func (d Document) Memo() *Memo { return d.memo }

// Local reports whether the root is a local (ingested) file: it has a
// primary path. A root that is not local exists only because peers sent
// it.
func (d Document) Local() bool { return d.FilePath() != "" }

// CanonicalCID is derived on every read, never stored: the best member
// by protocol.Canonical, of the vouched members for a local root (so no
// peer's record can rename a household's own file), of the whole key-set
// for a root known only from peers.
func (d Document) CanonicalCID() string { return elect(d.Local(), d.CIDs, d.Learned) }

// elect is the canonical CID of a key-set: of the members not learned
// from peers for a local root, of every member for one known only from
// peers.
func elect(local bool, cids []string, learned map[string][]string) string {
	if local {
		return protocol.Canonical(vouched(cids, learned))
	}
	return protocol.Canonical(cids)
}

// Vouched is the key-set members the node vouches for, sorted: those it
// computed from its own bytes or had supplied locally (an outside writer
// on its Redis, AddAlias), not those it holds only because peers' records
// carried them. They are what the node signs (records, search hits).
func (d Document) Vouched() []string { return vouched(d.CIDs, d.Learned) }

func vouched(cids []string, learned map[string][]string) []string {
	if len(learned) == 0 {
		return cids
	}
	out := make([]string, 0, len(cids))
	for _, c := range cids {
		if _, ok := learned[c]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// Vouches reports whether the node vouches for member c: it is in the
// key-set and was not learned from peers.
func (d Document) Vouches(c string) bool {
	_, learned := d.Learned[c]
	return !learned && slices.Contains(d.CIDs, c)
}

// FilePath is the primary local path, "" for a root known only from peers.
func (d Document) FilePath() string { return d.Fields["filePath"] }

// Presented is the flat metadata the document shows (GET /api/meta's
// answer nests it, model.NestMeta): for a local root, Fields with what
// peers fill in where the household has none of its own (Shown); for a
// root known only from peers, Fields plus every peer's field at top level
// where no field of higher precedence has it, its own fields first, then
// each peer's by peer ID, smallest first, so it does not depend on the
// order records arrived in. What peers said is always under
// origin/<peer>/ too. The map may be the document's own: do not change
// it.
func (d Document) Presented() map[string]string {
	if d.Local() {
		if !d.hasClaims() {
			return d.Fields
		}
		f, _ := d.Shown()
		return f
	}
	type claim struct{ peer, field, value string }
	var claims []claim
	for f, v := range d.Fields {
		rest, ok := strings.CutPrefix(f, OriginPrefix+"/")
		if !ok {
			continue
		}
		if p, name, ok := strings.Cut(rest, "/"); ok && p != "" && name != "" {
			claims = append(claims, claim{p, name, v})
		}
	}
	if len(claims) == 0 {
		return d.Fields
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].peer < claims[j].peer })
	out := make(map[string]string, len(d.Fields)+len(claims))
	for f, v := range d.Fields {
		out[f] = v
	}
	for _, c := range claims {
		if _, taken := out[c.field]; !taken {
			out[c.field] = c.value
		}
	}
	return out
}

// hasClaims reports a document that holds a peer's claim
// (origin/<peer>/…).
func (d Document) hasClaims() bool {
	for f := range d.Fields {
		if strings.HasPrefix(f, OriginPrefix+"/") {
			return true
		}
	}
	return false
}

// Document reads a root's document with one server round trip.
func (s *Store) Document(ctx context.Context, root RootID) (Document, error) {
	d, err := luaDocument.run(ctx, s, documentArgs{root: root, maxDuplicates: MaxDuplicates})
	if errors.Is(err, redis.Nil) {
		return Document{}, fmt.Errorf("store: root %s: %w", root, ErrNotFound)
	}
	if err != nil {
		return Document{}, err
	}
	d.Root, d.friends = root, s.friends
	return d, nil
}

// DocumentByCID resolves cid (canonical form) and reads its document in
// one script, so a concurrent delete or alias hand-over is never seen
// half-way.
// With Options.DocCache it is served from memory while nothing changed
// (cache.go).
func (s *Store) DocumentByCID(ctx context.Context, cid string) (Document, error) {
	if d, ok := s.cache.get(cid); ok {
		return d, nil
	}
	t := s.cache.ticket()
	d, err := luaDocumentByCID.run(ctx, s, documentByCIDArgs{cid: cid, maxDuplicates: MaxDuplicates})
	d.friends = s.friends
	if err == nil {
		d.memo = s.cache.put(t, cid, d)
	}
	if errors.Is(err, redis.Nil) {
		return Document{}, fmt.Errorf("store: cid %s: %w", cid, ErrNotFound)
	}
	if err != nil {
		return Document{}, err
	}
	return d, nil
}

// readDocument decodes docfor's answer.
func readDocument(root RootID, v []any) Document {
	pairs, _ := v[0].([]any)
	dups, _ := v[1].([]any)
	n, _ := v[2].(int64)
	d := Document{Root: root, Fields: make(map[string]string, len(pairs)/2), DuplicateCount: n}
	for i := 0; i+1 < len(pairs); i += 2 {
		f, _ := pairs[i].(string)
		val, _ := pairs[i+1].(string)
		if c, ok := strings.CutPrefix(f, "cids/"); ok {
			d.CIDs = append(d.CIDs, c)
			continue
		}
		d.Fields[f] = val
	}
	for _, p := range dups {
		if s, ok := p.(string); ok {
			d.Duplicates = append(d.Duplicates, s)
		}
	}
	if len(v) > 4 {
		peers, _ := v[3].([]any)
		for _, p := range peers {
			if s, ok := p.(string); ok {
				d.Peers = append(d.Peers, s)
			}
		}
		learned, _ := v[4].([]any)
		for i := 0; i+1 < len(learned); i += 2 {
			c, _ := learned[i].(string)
			ps, _ := learned[i+1].(string)
			if d.Learned == nil {
				d.Learned = make(map[string][]string, len(learned)/2)
			}
			d.Learned[c] = strings.Fields(ps)
		}
	}
	if len(v) > 5 {
		edited, _ := v[5].([]any)
		for _, f := range edited {
			if s, ok := f.(string); ok {
				d.Edited = append(d.Edited, s)
			}
		}
		sort.Strings(d.Edited)
	}
	sort.Strings(d.CIDs)
	sort.Strings(d.Duplicates)
	sort.Strings(d.Peers)
	return d
}
