package store_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A peer pairs a local file's sha2-256 with a dag-pb CID it made up, one
// that would win the election: the file keeps its canonical CID and what
// it vouches for, the made-up member joins the key-set (it resolves here)
// and is listed with the peers that sent it.
func TestProvenance_MadeUpMemberIsLearned(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	h := c.hashes()
	root := ingest(t, s, stat("/l/film.mkv", 10), c).Root
	announced := must[string](t)(s.Announced(ctx, root))
	fab := fabricated(c)
	if protocol.Canonical([]string{h.SHA256, h.IPFS, fab}) != fab {
		t.Fatalf("the made-up member %s would not win the election", fab)
	}

	for _, step := range []struct {
		peer    string
		written bool
		want    []string
	}{
		{peerB, true, []string{peerB}},
		{peerA, true, []string{peerA, peerB}},
		{peerB, false, []string{peerA, peerB}}, // a repeat writes nothing
	} {
		res := merge(t, s, step.peer, []string{h.SHA256, fab}, nil)
		if res.Root != root || res.Written != step.written {
			t.Fatalf("merge from %s: %+v, want root %s written %v", step.peer, res, root, step.written)
		}
		doc := resolve(t, s, fab)
		if doc.Root != root {
			t.Fatalf("%s resolves to %s, want the local root", fab, doc.Root)
		}
		if got := doc.CanonicalCID(); got != announced {
			t.Errorf("canonical CID %s after the peer's record, want %s", got, announced)
		}
		if got, want := doc.Vouched(), sortedOf(h.Midhash, h.SHA256, h.IPFS); !reflect.DeepEqual(got, want) {
			t.Errorf("vouched %v, want %v", got, want)
		}
		if doc.Vouches(fab) || !reflect.DeepEqual(doc.Learned[fab], step.want) {
			t.Errorf("learned %v, want %s from %v", doc.Learned, fab, step.want)
		}
		if got := doc.Nested()["learned"]; !reflect.DeepEqual(got, map[string][]string{fab: step.want}) {
			t.Errorf("the document's learned = %v", got)
		}
		if got := must[string](t)(s.Announced(ctx, root)); got != announced {
			t.Errorf("announces %s, want %s", got, announced)
		}
	}

	// The household's own alias is its word: it vouches for the member now.
	if err := s.AddAlias(ctx, root, fab); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	doc := resolve(t, s, fab)
	if !doc.Vouches(fab) || len(doc.Learned) != 0 || doc.CanonicalCID() != fab {
		t.Errorf("after AddAlias: vouches %v, learned %v, canonical %s", doc.Vouches(fab), doc.Learned, doc.CanonicalCID())
	}
}

// A root known only from peers elects from all its members; once the
// household's own bytes confirm into it, it elects from what it computed,
// and the peers' members stay listed with their peers.
func TestProvenance_PeerRootBecomesLocal(t *testing.T) {
	s := storetest.New(t)
	c := content{2, 2}
	h := c.hashes()
	fab := fabricated(c)
	res := merge(t, s, peerA, []string{h.SHA256, h.IPFS, fab}, map[string]string{"title": "Film"})
	if !res.Minted {
		t.Fatalf("merge: %+v, want a minted peer-only root", res)
	}
	doc := resolve(t, s, h.SHA256)
	if doc.CanonicalCID() != fab || len(doc.Learned) != 3 {
		t.Fatalf("peer-only root: canonical %s, learned %v; want %s elected from every member", doc.CanonicalCID(), doc.Learned, fab)
	}
	o := ingest(t, s, stat("/l/film.mkv", 10), c)
	mustCheck(t, s)
	doc = must[store.Document](t)(s.Document(ctx, o.Root))
	if !doc.Local() || doc.CanonicalCID() != must[string](t)(s.Announced(ctx, o.Root)) {
		t.Errorf("after ingest: local %v canonical %s", doc.Local(), doc.CanonicalCID())
	}
	if want := map[string][]string{fab: {peerA}}; !reflect.DeepEqual(doc.Learned, want) {
		t.Errorf("after ingest learned %v, want %v", doc.Learned, want)
	}
	if slices.Contains(doc.Vouched(), fab) || !slices.Contains(doc.CIDs, fab) {
		t.Errorf("vouched %v, key-set %v", doc.Vouched(), doc.CIDs)
	}
}

// A peer cannot attach another local file's midhash to a local file: the
// midhash names that file's bytes.
func TestProvenance_OtherLocalMidhashNotAttached(t *testing.T) {
	s := storetest.New(t)
	a, b := content{3, 3}, content{4, 4}
	ra := ingest(t, s, stat("/l/a.mkv", 10), a).Root
	rb := ingest(t, s, stat("/l/b.mkv", 11), b).Root
	res := merge(t, s, peerA, []string{a.hashes().SHA256, b.hashes().Midhash}, nil)
	if res.Root != ra {
		t.Fatalf("merge: %+v", res)
	}
	if doc := must[store.Document](t)(s.Document(ctx, ra)); slices.Contains(doc.CIDs, b.hashes().Midhash) {
		t.Errorf("a's key-set %v holds b's midhash", doc.CIDs)
	}
	if got := resolve(t, s, b.hashes().Midhash).Root; got != rb {
		t.Errorf("b's midhash resolves to %s, want b's root", got)
	}
}

// fsck finds a learned: hash out of step with the key-set, the own
// digests or the peers.
func TestProvenance_CheckFindsBadLearned(t *testing.T) {
	s := storetest.New(t)
	c := content{5, 5}
	h := c.hashes()
	root := ingest(t, s, stat("/l/film.mkv", 10), c).Root
	fab := fabricated(c)
	merge(t, s, peerA, []string{h.SHA256, fab}, nil)
	key := "learned:" + string(root)
	for _, tc := range []struct {
		name, field, val, want string
	}{
		{"not a member", weakCID(9), peerA, "not in the key-set"},
		{"an own digest", h.SHA256, peerA, "computed from its own bytes"},
		{"unknown peer", fab, peerA + " 12D3KooWZzzz", "not in peers:"},
		{"unsorted", fab, "12D3KooWZzzz " + peerA, "not sorted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := must[map[string]string](t)(s.DebugDump(ctx))[key]
			if err := s.DebugHSet(ctx, key, tc.field, tc.val); err != nil {
				t.Fatal(err)
			}
			v := must[[]store.Violation](t)(s.Check(ctx))
			found := false
			for _, x := range v {
				found = found || (x.Key == key && strings.Contains(x.Problem, tc.want))
			}
			if !found {
				t.Errorf("Check = %v, want %s: ...%s", v, key, tc.want)
			}
			// Put it back as it was.
			if tc.field != fab {
				if err := s.DebugHDel(ctx, key, tc.field); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.DebugHSet(ctx, key, fab, peerA); err != nil {
				t.Fatal(err)
			}
			if after := must[map[string]string](t)(s.DebugDump(ctx))[key]; after != before {
				t.Fatalf("restoring %s: %q, was %q", key, after, before)
			}
			mustCheck(t, s)
		})
	}
}
