package store_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// record is one peer record of the property tests.
type record struct {
	peer string
	cids []string
	meta map[string]string
}

// fileCIDs are every CID a peer may know a test file by: midhash,
// sha2-256, IPFS, a sha3-256 (strong) and a BitTorrent v1 (weak).
func fileCIDs(c content) []string {
	h := c.hashes()
	return []string{h.Midhash, h.SHA256, h.IPFS, strongCID(c.full), weakCID(c.full)}
}

// recordSet draws n records about a small universe of files with
// midhash collisions. Each record names one file: a random subset of its
// CIDs (some weak only), sometimes with another file's midhash (a weak
// link that must never join) or a member the peer made up, and a few
// hostile records pair the digests of two local files; every local file
// is sent one record pairing its sha2-256 with a made-up member. No chain of records links two local files
// through strong digests (see MergeRecord: that is a conflict).
func recordSet(rng *rand.Rand, files []content, locals []int, n int) []record {
	peers := []string{peerA, peerB, "12D3KooWCccc"}
	var out []record
	// The relabelling attack on every local file: its real sha2-256 paired
	// with a made-up member that would win the election.
	for _, l := range locals {
		out = append(out, record{peers[rng.IntN(3)], []string{files[l].hashes().SHA256, fabricated(files[l])}, map[string]string{}})
	}
	for len(out) < n {
		if len(locals) > 1 && rng.IntN(10) == 0 {
			a, b := files[locals[0]].hashes(), files[locals[1]].hashes()
			out = append(out, record{peers[rng.IntN(3)], []string{a.SHA256, b.IPFS}, map[string]string{"title": "hostile"}})
			continue
		}
		f := rng.IntN(len(files))
		all := fileCIDs(files[f])
		var cids []string
		for _, c := range all {
			if rng.IntN(2) == 0 {
				cids = append(cids, c)
			}
		}
		if len(cids) == 0 {
			cids = append(cids, all[rng.IntN(len(all))])
		}
		if rng.IntN(6) == 0 {
			cids = append(cids, files[rng.IntN(len(files))].hashes().Midhash)
		}
		if rng.IntN(4) == 0 {
			// A member the peer made up, one that would win the election.
			cids = append(cids, fabricated(files[f]))
		}
		meta := map[string]string{}
		if rng.IntN(2) == 0 {
			meta["title"] = fmt.Sprintf("file %d", f)
		}
		if rng.IntN(3) == 0 {
			meta["fileinfo/duration"] = fmt.Sprint(rng.IntN(100))
		}
		out = append(out, record{peers[rng.IntN(3)], cids, meta})
	}
	return out
}

// fabricated is a dag-pb CID a hostile peer pairs with file c: it would
// win the election over c's canonical CID, so as a vouched member it
// would rename the file. Each file has its own, so no chain of them links two files.
func fabricated(c content) string {
	h := c.hashes()
	canon := protocol.Canonical([]string{h.Midhash, h.SHA256, h.IPFS})
	for i := 0; ; i++ {
		mh, _ := multihash.Encode(digest(fmt.Sprintf("fab-%d-%d", c.full, c.mid), i), protocol.CodeSHA2_256)
		if d := cid.NewCidV1(protocol.CodeDagPB, mh).String(); protocol.Canonical([]string{canon, d}) == d {
			return d
		}
	}
}

// resolution maps every CID of the universe to the key-set it resolves
// to (sorted, space-separated) and the peers each learned member came
// from, "" when unknown: roots are compared by what they hold, not by ID.
func resolution(tb testing.TB, s *store.Store, universe []string) map[string]string {
	tb.Helper()
	out := make(map[string]string, len(universe))
	for _, c := range universe {
		doc, err := s.DocumentByCID(ctx, c)
		if err == nil {
			out[c] = strings.Join(doc.CIDs, " ") + fmt.Sprint(doc.Learned)
		}
	}
	return out
}

// TestMergeRecord_Properties merges random record sets, hostile members
// made up by peers among them, in many random orders (one redis-server,
// FLUSHDB between orders) and checks the six merge properties: every
// order resolves every CID to the same key-set with the same vouching
// peers (order independence); each record's strong members resolve to
// one root holding all its members (union); merging everything again
// writes nothing (idempotence); local aliases, own digests and paths are
// untouched (local precedence); no two files with different strong
// digests ever share a root (weak-link safety); and a local file's
// canonical CID and what it signs are its own digests whatever peers
// sent, their members listed with exactly the peers that sent them
// (relabel safety). Check is clean after every merge of the first orders
// and at the end of every order.
func TestMergeRecord_Properties(t *testing.T) {
	s := storetest.New(t)
	files := []content{{1, 1}, {1, 2}, {2, 3}, {3, 4}, {3, 5}, {4, 6}, {5, 7}, {6, 8}}
	var universe []string
	for _, f := range files {
		universe = append(universe, fileCIDs(f)...)
		universe = append(universe, fabricated(f))
	}
	orders := 200
	if testing.Short() {
		orders = 40
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed*104729))
			locals := rng.Perm(len(files))[:3]
			slices.Sort(locals)
			recs := recordSet(rng, files, locals, 14)
			var want map[string]string
			fabs := 0 // made-up members local files held
			n := orders
			if seed > 1 {
				n = orders / 10
			}
			for order := 0; order < n; order++ {
				if err := s.DebugFlush(ctx); err != nil {
					t.Fatal(err)
				}
				localRoots := map[int]store.RootID{}
				for _, i := range locals {
					localRoots[i] = ingest(t, s, stat(fmt.Sprintf("/l/%d", i), int64(100+i)), files[i]).Root
				}
				ownBefore := ownDigests(t, s)
				perm := rng.Perm(len(recs))
				results := make([]store.MergeResult, len(recs))
				for _, i := range perm {
					r := recs[i]
					res, err := s.MergeRecord(ctx, r.peer, r.cids, r.meta)
					if err != nil {
						t.Fatalf("order %d: merge %v: %v", order, r.cids, err)
					}
					results[i] = res
					if order < 5 {
						mustCheck(t, s)
					}
				}
				mustCheck(t, s)
				got := resolution(t, s, universe)
				if want == nil {
					want = got
					t.Logf("%d records, %d CIDs known; %s", len(recs), len(got), summary(results))
				} else if !reflect.DeepEqual(got, want) {
					for _, c := range universe {
						if got[c] != want[c] {
							t.Errorf("order %d: %s resolves to [%s], first order to [%s]", order, c, got[c], want[c])
						}
					}
					t.FailNow()
				}
				checkUnion(t, s, recs, results, order)
				checkLocals(t, s, files, localRoots, ownBefore, order)
				checkWeakLinks(t, s, files, order)
				fabs += checkRelabel(t, s, files, localRoots, recs, results, order)
				if order%4 == 0 {
					checkRepeat(t, s, recs, rng.Perm(len(recs)), order)
				}
			}
			if fabs == 0 {
				t.Errorf("no local file was sent a made-up member: relabel safety was not exercised")
			}
		})
	}
}

// checkUnion: every record that is no conflict has its strong members on
// one root that holds all its members; a weak-only record's members are
// exactly the key-set of a root.
func checkUnion(tb testing.TB, s *store.Store, recs []record, results []store.MergeResult, order int) {
	tb.Helper()
	for i, r := range recs {
		if results[i].Conflict {
			continue
		}
		var strong []string
		for _, c := range r.cids {
			if protocol.Rank(c) >= protocol.StrongRank {
				strong = append(strong, c)
			}
		}
		if len(strong) == 0 {
			continue
		}
		doc := resolve(tb, s, strong[0])
		for _, c := range r.cids {
			if !slices.Contains(doc.CIDs, c) && !(doc.Local() && computedByOtherLocal(tb, s, doc.Root, c)) {
				tb.Fatalf("order %d: record %v: %s's root lacks %s", order, r.cids, strong[0], c)
			}
		}
		for _, c := range strong {
			if got := resolve(tb, s, c).Root; got != doc.Root {
				tb.Fatalf("order %d: record %v: strong %s resolves to %s, not %s", order, r.cids, c, got, doc.Root)
			}
		}
	}
}

// computedByOtherLocal reports whether c is a digest a local root other
// than r computed from its own bytes: a peer cannot attach it to local r.
func computedByOtherLocal(tb testing.TB, s *store.Store, r store.RootID, c string) bool {
	tb.Helper()
	doc, err := s.DocumentByCID(ctx, c)
	if err != nil || doc.Root == r || !doc.Local() {
		return false
	}
	own := must[store.Hashes](tb)(s.Own(ctx, doc.Root))
	return c == own.Midhash || c == own.SHA256 || c == own.IPFS
}

// ownDigests returns every own:<root> hash, as DebugDump shows it.
func ownDigests(tb testing.TB, s *store.Store) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for k, v := range must[map[string]string](tb)(s.DebugDump(ctx)) {
		if strings.HasPrefix(k, "own:") {
			out[k] = v
		}
	}
	return out
}

// checkLocals: local files keep their root, paths, aliases and own
// digests.
func checkLocals(tb testing.TB, s *store.Store, files []content, roots map[int]store.RootID, own map[string]string, order int) {
	tb.Helper()
	if got := ownDigests(tb, s); !reflect.DeepEqual(got, own) {
		tb.Fatalf("order %d: own digests %v, want %v", order, got, own)
	}
	for i, r := range roots {
		h := files[i].hashes()
		for _, c := range []string{h.SHA256, h.IPFS} {
			if got := must[store.RootID](tb)(s.GetByCID(ctx, c)); got != r {
				tb.Fatalf("order %d: local alias %s repointed to %s", order, c, got)
			}
		}
		doc := must[store.Document](tb)(s.Document(ctx, r))
		if doc.FilePath() != fmt.Sprintf("/l/%d", i) || doc.DuplicateCount != 0 {
			tb.Fatalf("order %d: local root %s paths changed: %v", order, r, doc.Fields)
		}
	}
}

// checkWeakLinks: no root holds the strong digests of two different
// files.
func checkWeakLinks(tb testing.TB, s *store.Store, files []content, order int) {
	tb.Helper()
	for i, f := range files {
		doc, err := s.DocumentByCID(ctx, f.hashes().SHA256)
		if err != nil {
			continue
		}
		for j, g := range files {
			if j != i && (slices.Contains(doc.CIDs, g.hashes().SHA256) || slices.Contains(doc.CIDs, strongCID(g.full))) {
				tb.Fatalf("order %d: files %d and %d share root %s: %v", order, i, j, doc.Root, doc.CIDs)
			}
		}
	}
}

// checkRelabel: a local root's canonical CID is what it announces, it
// vouches for its own digests only, and every other member lists exactly
// the peers whose records carried it. It returns how many made-up
// members the local roots hold.
func checkRelabel(tb testing.TB, s *store.Store, files []content, roots map[int]store.RootID, recs []record, results []store.MergeResult, order int) int {
	tb.Helper()
	fabs := 0
	for i, r := range roots {
		h := files[i].hashes()
		doc := must[store.Document](tb)(s.Document(ctx, r))
		announced := must[string](tb)(s.Announced(ctx, r))
		if got := doc.CanonicalCID(); got != announced || got != protocol.Canonical([]string{h.Midhash, h.SHA256, h.IPFS}) {
			tb.Fatalf("order %d: local file %d's canonical CID is %s, it announces %s", order, i, got, announced)
		}
		if v := doc.Vouched(); !reflect.DeepEqual(v, sortedOf(h.Midhash, h.SHA256, h.IPFS)) {
			tb.Fatalf("order %d: local file %d vouches for %v, want its own digests", order, i, v)
		}
		for _, c := range doc.CIDs {
			if doc.Vouches(c) {
				continue
			}
			if c == fabricated(files[i]) {
				fabs++
			}
			// The peers of the records that carried c into this root:
			// merged (no conflict) through a strong member it holds.
			var want []string
			for k, rec := range recs {
				if results[k].Conflict || !slices.Contains(rec.cids, c) || slices.Contains(want, rec.peer) {
					continue
				}
				for _, m := range rec.cids {
					if protocol.Rank(m) >= protocol.StrongRank && slices.Contains(doc.CIDs, m) {
						want = append(want, rec.peer)
						break
					}
				}
			}
			slices.Sort(want)
			if !reflect.DeepEqual(doc.Learned[c], want) {
				tb.Fatalf("order %d: local file %d learned %s from %v, want %v", order, i, c, doc.Learned[c], want)
			}
		}
	}
	return fabs
}

func sortedOf(cids ...string) []string {
	slices.Sort(cids)
	return cids
}

// checkRepeat merges every record again (in another order): nothing is
// written, the keyspace and the feed are unchanged.
func checkRepeat(tb testing.TB, s *store.Store, recs []record, perm []int, order int) {
	tb.Helper()
	before := must[map[string]string](tb)(s.DebugDump(ctx))
	for _, i := range perm {
		r := recs[i]
		res := must[store.MergeResult](tb)(s.MergeRecord(ctx, r.peer, r.cids, r.meta))
		if res.Written {
			tb.Fatalf("order %d: repeat of %v wrote: %+v", order, r.cids, res)
		}
	}
	after := must[map[string]string](tb)(s.DebugDump(ctx))
	if !reflect.DeepEqual(before, after) {
		for k := range mergedKeys(before, after) {
			if before[k] != after[k] {
				tb.Errorf("order %d: repeat changed %s: %q → %q", order, k, before[k], after[k])
			}
		}
		tb.FailNow()
	}
}

// summary counts what the merges of one order did.
func summary(results []store.MergeResult) string {
	var minted, local, conflict, folded, repeat int
	for _, r := range results {
		switch {
		case r.Conflict:
			conflict++
		case r.Minted:
			minted++
		case r.Local:
			local++
		}
		if !r.Written {
			repeat++
		}
		folded += len(r.Folded)
	}
	return fmt.Sprintf("minted %d, into local roots %d, conflicts %d, folds %d, wrote nothing %d", minted, local, conflict, folded, repeat)
}
