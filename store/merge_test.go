package store_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// Peer IDs of the tests (any string without '/' or spaces will do).
const (
	peerA = "12D3KooWAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	peerB = "12D3KooWBbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// strongCID is a sha3-256 CID (rank 30) other systems might know a file
// by; weakCID a BitTorrent v1 per-file CID (rank 20).
func strongCID(n int) string {
	mh, _ := multihash.Encode(digest("sha3", n), protocol.CodeSHA3_256)
	return cid.NewCidV1(protocol.CodeRaw, mh).String()
}

func weakCID(n int) string {
	mh, _ := multihash.Encode(digest("bt", n)[:20], protocol.CodeSHA1)
	return cid.NewCidV1(protocol.CodeBTFileV1, mh).String()
}

// dagPBBefore is a dag-pb CID (rank 40) that sorts before c: as a
// canonical it would beat it.
func dagPBBefore(c string) string {
	for i := 0; ; i++ {
		mh, _ := multihash.Encode(digest("first", i), protocol.CodeSHA2_256)
		if d := cid.NewCidV1(protocol.CodeDagPB, mh).String(); d < c {
			return d
		}
	}
}

func merge(tb testing.TB, s *store.Store, peer string, cids []string, meta map[string]string) store.MergeResult {
	tb.Helper()
	res, err := s.MergeRecord(ctx, peer, cids, meta)
	if err != nil {
		tb.Fatalf("MergeRecord(%v): %v", cids, err)
	}
	mustCheck(tb, s)
	// The merge answers with the document it wrote: the one a read finds.
	if !res.Conflict {
		if doc := must[store.Document](tb)(s.Document(ctx, res.Root)); !reflect.DeepEqual(res.Document, doc) {
			tb.Errorf("the merge answered\n%+v\nthe store holds\n%+v", res.Document, doc)
		}
	} else if res.Document.Root != "" {
		tb.Errorf("a conflict answered a document: %+v", res.Document)
	}
	return res
}

func resolve(tb testing.TB, s *store.Store, c string) store.Document {
	tb.Helper()
	return must[store.Document](tb)(s.DocumentByCID(ctx, c))
}

func eventCount(tb testing.TB, s *store.Store) int {
	tb.Helper()
	return len(must[[]store.Event](tb)(s.Events(ctx, "", 1_000_000)))
}

func TestMergeRecord_MintsPeerOnlyRoot(t *testing.T) {
	s := storetest.New(t)
	h := content{1, 1}.hashes()
	rec := []string{h.Midhash, h.SHA256, h.IPFS, weakCID(1)}
	res := merge(t, s, peerA, rec, map[string]string{"title": "A film", "fileinfo/duration": "60"})
	if !res.Minted || !res.Written || res.Local || res.Conflict {
		t.Fatalf("result = %+v, want a written, minted peer-only root", res)
	}
	for _, c := range rec {
		doc := resolve(t, s, c)
		if doc.Root != res.Root {
			t.Errorf("%s resolves to %s, want %s", c, doc.Root, res.Root)
		}
	}
	doc := resolve(t, s, h.SHA256)
	want := append([]string{}, rec...)
	slices.Sort(want)
	if !reflect.DeepEqual(doc.CIDs, want) {
		t.Errorf("cids = %v, want %v", doc.CIDs, want)
	}
	if doc.Local() || doc.FilePath() != "" {
		t.Errorf("peer-only root is local: %+v", doc.Fields)
	}
	if !reflect.DeepEqual(doc.Peers, []string{peerA}) {
		t.Errorf("peers = %v, want [%s]", doc.Peers, peerA)
	}
	if got := doc.Fields["origin/"+peerA+"/title"]; got != "A film" {
		t.Errorf("origin title = %q", got)
	}
	n := doc.Nested()
	if n["title"] != "A film" {
		t.Errorf("nested title = %v, want the peer's at top level", n["title"])
	}
	if fi, _ := n["fileinfo"].(map[string]any); fi["duration"] != "60" {
		t.Errorf("nested fileinfo = %v", n["fileinfo"])
	}
	if o, _ := n["origin"].(map[string]any); o[peerA] == nil {
		t.Errorf("nested origin = %v, want %s's claims", n["origin"], peerA)
	}
	// Never announced: no own digests.
	for _, e := range must[[]store.Event](t)(s.Events(ctx, "", 100)) {
		if e.Root == res.Root && e.Type != store.EventMint {
			t.Errorf("event %+v, want one mint", e)
		}
	}
}

// A repeat of a record writes nothing: the keyspace, values included, is
// unchanged and no event is appended.
func TestMergeRecord_RepeatWritesNothing(t *testing.T) {
	s := storetest.New(t)
	local := ingest(t, s, stat("/l/a", 10), content{1, 1})
	h1, h2 := content{1, 1}.hashes(), content{2, 2}.hashes()
	recs := []struct {
		cids []string
		meta map[string]string
	}{
		{[]string{h1.SHA256, weakCID(1), strongCID(1)}, map[string]string{"title": "a"}},
		{[]string{h2.Midhash, h2.SHA256}, map[string]string{"title": "b"}},
		{[]string{h2.IPFS, h2.SHA256, h1.Midhash}, nil},
		{[]string{weakCID(7)}, map[string]string{"x": "y"}},
	}
	for _, r := range recs {
		merge(t, s, peerA, r.cids, r.meta)
	}
	before := must[map[string]string](t)(s.DebugDump(ctx))
	for _, r := range recs {
		res := merge(t, s, peerA, r.cids, r.meta)
		if res.Written {
			t.Errorf("repeat of %v: Written", r.cids)
		}
	}
	after := must[map[string]string](t)(s.DebugDump(ctx))
	if !reflect.DeepEqual(before, after) {
		for k := range mergedKeys(before, after) {
			if before[k] != after[k] {
				t.Errorf("%s: %q → %q", k, before[k], after[k])
			}
		}
	}
	_ = local
}

func mergedKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// Peers never repoint a local alias, never write the local schema fields
// and never change what the node announces for its own files.
func TestMergeRecord_LocalPrecedence(t *testing.T) {
	s := storetest.New(t)
	h := content{1, 1}.hashes()
	local := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	before := must[store.Document](t)(s.Document(ctx, local))
	own := must[map[string]string](t)(s.DebugDump(ctx))["own:"+string(local)]

	t.Run("a dag-pb that sorts first", func(t *testing.T) {
		first := dagPBBefore(h.IPFS)
		res := merge(t, s, peerA, []string{h.SHA256, first}, map[string]string{"title": "theirs"})
		if res.Root != local || !res.Local || !res.Written {
			t.Fatalf("result = %+v, want the local root %s", res, local)
		}
		if got := must[map[string]string](t)(s.DebugDump(ctx))["own:"+string(local)]; got != own {
			t.Errorf("own digests %s, want %s", got, own)
		}
		dump := must[map[string]string](t)(s.DebugDump(ctx))
		if !strings.Contains(dump["supplied:"+string(local)], first) {
			t.Errorf("supplied = %s, want %s in it", dump["supplied:"+string(local)], first)
		}
		doc := must[store.Document](t)(s.Document(ctx, local))
		if doc.FilePath() != before.FilePath() || doc.Fields["sizeByte"] != before.Fields["sizeByte"] || doc.Fields["mtime"] != before.Fields["mtime"] {
			t.Errorf("local schema fields changed: %v", doc.Fields)
		}
		if _, ok := doc.Nested()["title"]; ok {
			t.Errorf("a peer's title is at top level of a local document")
		}
		if o, _ := doc.Nested()["origin"].(map[string]any); o[peerA] == nil {
			t.Errorf("origin = %v, want the peer's claim", doc.Nested()["origin"])
		}
		if !doc.Local() {
			t.Error("local root is not Local")
		}
	})
	t.Run("a foreign file with the local midhash", func(t *testing.T) {
		other := content{1, 2}.hashes() // a midhash collision
		res := merge(t, s, peerA, []string{h.Midhash, other.SHA256, other.IPFS}, nil)
		if res.Root == local || res.Local || !res.Minted {
			t.Fatalf("result = %+v, want a new peer-only root", res)
		}
		if got := must[store.RootID](t)(s.GetByCID(ctx, h.Midhash)); got != local {
			t.Errorf("midhash repointed to %s", got)
		}
		doc := resolve(t, s, other.SHA256)
		if !slices.Contains(doc.CIDs, h.Midhash) {
			t.Errorf("peer root %v lacks the midhash as an alternative member", doc.CIDs)
		}
	})
	t.Run("reserved fields", func(t *testing.T) {
		for _, f := range []string{"filePath", "duplicates", "mtime", "cids/x", "origin/x/y"} {
			_, err := s.MergeRecord(ctx, peerA, []string{h.SHA256}, map[string]string{f: "/etc/passwd"})
			if !errors.Is(err, store.ErrInvalidRecord) {
				t.Errorf("field %s: err = %v, want ErrInvalidRecord", f, err)
			}
		}
		// A producer's size is kept as its claim, never over the local one.
		sizeBefore := must[store.Document](t)(s.Document(ctx, local)).Fields["sizeByte"]
		if _, err := s.MergeRecord(ctx, peerA, []string{h.SHA256}, map[string]string{"sizeByte": "999"}); err != nil {
			t.Fatal(err)
		}
		doc := must[store.Document](t)(s.Document(ctx, local))
		if doc.Fields["sizeByte"] != sizeBefore || doc.Fields["origin/"+peerA+"/sizeByte"] != "999" {
			t.Errorf("sizeByte %q, peer's claim %q", doc.Fields["sizeByte"], doc.Fields["origin/"+peerA+"/sizeByte"])
		}
	})
	after := must[store.Document](t)(s.Document(ctx, local))
	for _, c := range before.CIDs {
		if got := must[store.RootID](t)(s.GetByCID(ctx, c)); got != local {
			t.Errorf("local alias %s repointed to %s", c, got)
		}
	}
	if after.FilePath() != "/l/a" || after.DuplicateCount != 0 {
		t.Errorf("local paths changed: %+v", after)
	}
}

// A record linking two local roots through strong digests joins nothing
// and writes nothing but the conflict.
func TestMergeRecord_NeverJoinsLocalRoots(t *testing.T) {
	s := storetest.New(t)
	a := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	b := ingest(t, s, stat("/l/b", 20), content{2, 2}).Root
	ha, hb := content{1, 1}.hashes(), content{2, 2}.hashes()
	before := must[map[string]string](t)(s.DebugDump(ctx))
	rec := []string{ha.SHA256, hb.IPFS, strongCID(9), weakCID(9)}
	res := merge(t, s, peerA, rec, map[string]string{"title": "both"})
	want := []store.RootID{a, b}
	slices.Sort(want)
	if !res.Conflict || res.Root != "" || !reflect.DeepEqual(res.Conflicting, want) {
		t.Fatalf("result = %+v, want a conflict between %v", res, want)
	}
	after := must[map[string]string](t)(s.DebugDump(ctx))
	for k := range mergedKeys(before, after) {
		if before[k] == after[k] || strings.HasPrefix(k, "conflicts:") {
			continue
		}
		t.Errorf("%s: %q → %q", k, before[k], after[k])
	}
	for _, r := range want {
		if !strings.Contains(after["conflicts:"+string(r)], peerA) {
			t.Errorf("conflicts:%s = %q, want the peer recorded", r, after["conflicts:"+string(r)])
		}
	}
	for _, c := range []string{strongCID(9), weakCID(9)} {
		if _, err := s.GetByCID(ctx, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of a conflicting record resolves: %v", c, err)
		}
	}
	if res := merge(t, s, peerA, rec, map[string]string{"title": "both"}); res.Written {
		t.Errorf("repeat of the conflict wrote: %+v", res)
	}
}

// A midhash alone never joins two roots: the record with a foreign
// midhash attaches as an alternative holder.
func TestMergeRecord_WeakLinksNeverJoin(t *testing.T) {
	s := storetest.New(t)
	h1, h2 := content{1, 1}.hashes(), content{1, 2}.hashes() // one midhash
	r1 := merge(t, s, peerA, []string{h1.Midhash, h1.SHA256}, nil).Root
	r2 := merge(t, s, peerB, []string{h1.Midhash, h2.SHA256, weakCID(3)}, nil).Root
	if r1 == r2 {
		t.Fatal("a shared midhash joined two roots")
	}
	r3 := merge(t, s, peerB, []string{weakCID(3), h1.SHA256}, nil)
	if r3.Root != r1 || len(r3.Folded) != 0 {
		t.Fatalf("a shared weak CID folded roots: %+v", r3)
	}
	for _, c := range []string{h1.SHA256, h2.SHA256} {
		if d := resolve(t, s, c); slices.Contains(d.CIDs, h1.SHA256) && slices.Contains(d.CIDs, h2.SHA256) {
			t.Errorf("%s resolves to a key-set with both digests: %v", c, d.CIDs)
		}
	}
	// A strong digest shared by both peer-only roots folds them.
	res := merge(t, s, peerA, []string{h1.SHA256, h2.SHA256}, nil)
	if len(res.Folded) != 1 {
		t.Fatalf("result = %+v, want one fold", res)
	}
}

// Weak-only records: one peer-only root per distinct member set.
func TestMergeRecord_WeakOnly(t *testing.T) {
	s := storetest.New(t)
	h := content{1, 1}.hashes()
	a := merge(t, s, peerA, []string{h.Midhash}, map[string]string{"title": "a"})
	b := merge(t, s, peerB, []string{h.Midhash}, map[string]string{"title": "b"})
	if !a.Minted || b.Minted || a.Root != b.Root {
		t.Fatalf("same members minted twice: %+v %+v", a, b)
	}
	c := merge(t, s, peerB, []string{h.Midhash, weakCID(1)}, nil)
	if !c.Minted || c.Root == a.Root {
		t.Fatalf("other members joined: %+v", c)
	}
	// The alias goes to the holder with more members, whatever the order.
	if got := resolve(t, s, h.Midhash).Root; got != c.Root {
		t.Errorf("midhash resolves to %s, want %s", got, c.Root)
	}
	d := resolve(t, s, weakCID(1)).Nested()
	if d["title"] != nil {
		t.Errorf("a peer's claim on another root shows: %v", d["title"])
	}
	if got := must[store.Document](t)(s.Document(ctx, a.Root)).Nested()["title"]; got != "a" {
		t.Errorf("title = %v, want peer A's (smallest peer ID)", got)
	}
}

func TestMergeRecord_InvalidInput(t *testing.T) {
	s := storetest.New(t)
	h := content{1, 1}.hashes()
	v0 := "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"
	tooMany := make([]string, store.MaxMergeCIDs+1)
	for i := range tooMany {
		tooMany[i] = strongCID(i)
	}
	big := map[string]string{"a": strings.Repeat("x", store.MaxMergeFieldValue+1)}
	huge := map[string]string{}
	for i := 0; i < 20; i++ {
		huge[strings.Repeat("k", 10)+string(rune('a'+i))] = strings.Repeat("x", store.MaxMergeFieldValue)
	}
	tests := []struct {
		name string
		peer string
		cids []string
		meta map[string]string
	}{
		{"no peer", "", []string{h.SHA256}, nil},
		{"peer with slash", "a/b", []string{h.SHA256}, nil},
		{"peer with space", "a b", []string{h.SHA256}, nil},
		{"no cids", peerA, nil, nil},
		{"garbage cid", peerA, []string{"nope"}, nil},
		{"cidv0", peerA, []string{v0}, nil},
		{"upper case", peerA, []string{strings.ToUpper(h.SHA256)}, nil},
		{"too many cids", peerA, tooMany, nil},
		{"empty field", peerA, []string{h.SHA256}, map[string]string{"": "x"}},
		{"bad field", peerA, []string{h.SHA256}, map[string]string{"a//b": "x"}},
		{"reserved", peerA, []string{h.SHA256}, map[string]string{"filePath": "/x"}},
		{"value too long", peerA, []string{h.SHA256}, big},
		{"too many bytes", peerA, []string{h.SHA256}, huge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.MergeRecord(ctx, tt.peer, tt.cids, tt.meta)
			if !errors.Is(err, store.ErrInvalidRecord) {
				t.Fatalf("err = %v, want ErrInvalidRecord", err)
			}
			if keys := dumpKeys(t, s); len(keys) != 0 {
				t.Errorf("wrote %v", keys)
			}
		})
	}
}

// Beyond the cap the least recently touched peer-only roots go with every
// alias; a root a local file joined is never evicted.
func TestMergeRecord_Eviction(t *testing.T) {
	srv := storetest.Server(t)
	s, err := store.Open(context.Background(), store.Options{URL: srv.URL(), Logger: storetest.Logger(t), PeerRootsMax: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	var roots []store.RootID
	for i := 1; i <= 5; i++ {
		h := content{i, i}.hashes()
		res := merge(t, s, peerA, []string{h.Midhash, h.SHA256, h.IPFS}, map[string]string{"title": "t"})
		roots = append(roots, res.Root)
		if i == 4 {
			if !reflect.DeepEqual(res.Evicted, []store.RootID{roots[0]}) {
				t.Errorf("merge 4 evicted %v, want %v", res.Evicted, roots[:1])
			}
		}
		time.Sleep(3 * time.Millisecond) // distinct touch times
	}
	if n := must[int64](t)(s.Roots(ctx)); n != 3 {
		t.Errorf("%d roots, want 3", n)
	}
	for i := 1; i <= 5; i++ {
		h := content{i, i}.hashes()
		for _, c := range []string{h.Midhash, h.SHA256, h.IPFS} {
			_, err := s.GetByCID(ctx, c)
			if gone := errors.Is(err, store.ErrNotFound); gone != (i <= 2) {
				t.Errorf("file %d: %s gone = %v, want %v", i, c, gone, i <= 2)
			}
		}
	}
	for _, k := range dumpKeys(t, s) {
		for _, r := range roots[:2] {
			if strings.Contains(k, string(r)) {
				t.Errorf("key %s of an evicted root is left", k)
			}
		}
	}

	// The oldest remaining peer-only root (file 3) becomes local: a file
	// with its bytes is ingested and confirms into it.
	joined := ingest(t, s, stat("/l/three", 3), content{3, 3})
	if joined.Root != roots[2] {
		t.Fatalf("the local file went to %s, want the peer root %s", joined.Root, roots[2])
	}
	mustCheck(t, s)
	for i := 6; i <= 9; i++ {
		h := content{i, i}.hashes()
		merge(t, s, peerA, []string{h.SHA256}, nil)
		time.Sleep(3 * time.Millisecond)
	}
	doc := must[store.Document](t)(s.Document(ctx, roots[2]))
	if !doc.Local() || !slices.Contains(doc.CIDs, content{3, 3}.hashes().IPFS) {
		t.Errorf("the joined root = %+v, want it local with its members", doc)
	}
	if !reflect.DeepEqual(doc.Peers, []string{peerA}) {
		t.Errorf("peers = %v", doc.Peers)
	}
	if n := must[int64](t)(s.Roots(ctx)); n != 4 {
		t.Errorf("%d roots, want 3 peer-only and the local one", n)
	}
}

// A root known only from peers shows the peers' fields by peer ID; its
// own fields (an outside writer's) come first.
func TestDocument_PeerFieldsPrecedence(t *testing.T) {
	for _, order := range [][]string{{peerA, peerB}, {peerB, peerA}} {
		s := storetest.New(t)
		h := content{1, 1}.hashes()
		var root store.RootID
		for _, p := range order {
			root = merge(t, s, p, []string{h.SHA256}, map[string]string{"title": "by " + p[8:9], "only/" + p[8:9]: "1"}).Root
		}
		doc := must[store.Document](t)(s.Document(ctx, root))
		n := doc.Nested()
		if n["title"] != "by A" {
			t.Errorf("order %v: title = %v, want peer A's", order[0][8:9], n["title"])
		}
		if o, _ := n["only"].(map[string]any); o["A"] != "1" || o["B"] != "1" {
			t.Errorf("only = %v, want both peers' fields", n["only"])
		}
		origin, _ := n["origin"].(map[string]any)
		if b, _ := origin[peerB].(map[string]any); b["title"] != "by B" {
			t.Errorf("origin = %v, want B's claim kept", origin)
		}
		if !reflect.DeepEqual(doc.Peers, []string{peerA, peerB}) || !reflect.DeepEqual(n["peers"], []string{peerA, peerB}) {
			t.Errorf("peers = %v", doc.Peers)
		}
		must[int](t)(s.SetFields(ctx, root, map[string]string{"title": "mine"}))
		if got := must[store.Document](t)(s.Document(ctx, root)).Nested()["title"]; got != "mine" {
			t.Errorf("title = %v, want the root's own field first", got)
		}
	}
}

// A peer pairs a local file with another file's digests (or midhash):
// once the node holds that other file itself, its own digests name its
// bytes. The local root that only had them from the peer lets go of them,
// and the new file is neither its duplicate nor merged into it.
func TestMergeRecord_OwnDigestsTakeBackSuppliedOnes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(song, delta store.Hashes) []string
	}{
		{"strong digests", func(song, delta store.Hashes) []string {
			return []string{song.SHA256, delta.SHA256, delta.IPFS}
		}},
		{"the midhash", func(song, delta store.Hashes) []string { return []string{song.SHA256, delta.Midhash} }},
		{"everything", func(song, delta store.Hashes) []string {
			return []string{song.SHA256, delta.Midhash, delta.SHA256, delta.IPFS}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := storetest.New(t)
			songC, deltaC := content{1, 1}, content{2, 2}
			song, delta := songC.hashes(), deltaC.hashes()
			songRoot := ingest(t, s, stat("/l/song.mp3", 10), songC).Root
			res := merge(t, s, peerA, tc.record(song, delta), map[string]string{"title": "joined"})
			if res.Root != songRoot {
				t.Fatalf("merge went to %s, want the local root %s", res.Root, songRoot)
			}
			o := ingest(t, s, stat("/l/delta.mkv", 20), deltaC)
			if o.Root == songRoot {
				t.Fatalf("the new file joined the root a peer paired it with (%s)", o.Kind)
			}
			for _, c := range []string{delta.Midhash, delta.SHA256, delta.IPFS} {
				doc := resolve(t, s, c)
				if doc.FilePath() != "/l/delta.mkv" {
					t.Errorf("%s names %q, want the file computed to have it", c, doc.FilePath())
				}
			}
			doc := must[store.Document](t)(s.Document(ctx, songRoot))
			for _, c := range []string{delta.Midhash, delta.SHA256, delta.IPFS} {
				if slices.Contains(doc.CIDs, c) {
					t.Errorf("song's key-set %v still holds the other file's %s", doc.CIDs, c)
				}
			}
			if got := resolve(t, s, song.SHA256).FilePath(); got != "/l/song.mp3" {
				t.Errorf("song's own sha2-256 names %q", got)
			}
			mustCheck(t, s)
		})
	}
}
