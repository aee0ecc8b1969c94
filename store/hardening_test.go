package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A midhash collision (big1 and big2 share size and middle MiB) where
// big1 arrives as big2's duplicate, big2 is deleted before big1's full
// pass is applied: the root must not keep big2's digests, and after the
// confirm it holds exactly big1's.
func TestRemove_PromotedUnconfirmedDuplicateDropsOldDigests(t *testing.T) {
	s := storetest.New(t)
	big2, big1 := content{7, 2}, content{7, 1} // one midhash, two contents
	r := ingest(t, s, stat("/l/big2", 3<<20), big2).Root
	if o := must[store.Outcome](t)(s.Arrive(ctx, stat("/l/big1", 3<<20), big1.hashes().Midhash)); o.Kind != store.KindDuplicate {
		t.Fatalf("arrive big1 = %+v, want duplicate", o)
	}
	o := must[store.Outcome](t)(s.RemovePath(ctx, "/l/big2"))
	if o.Kind != store.KindPromoted || o.Path != "/l/big1" {
		t.Fatalf("remove big2 = %+v, want big1 promoted", o)
	}
	doc := must[store.Document](t)(s.Document(ctx, r))
	if want := []string{big1.hashes().Midhash}; !reflect.DeepEqual(doc.CIDs, want) {
		t.Errorf("after promotion cids = %v, want only the midhash %v", doc.CIDs, want)
	}
	for _, c := range []string{big2.hashes().SHA256, big2.hashes().IPFS} {
		if _, err := s.GetByCID(ctx, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("big2's %s still resolves: %v", c, err)
		}
	}
	mustCheck(t, s)

	if o := must[store.Outcome](t)(s.Confirm(ctx, stat("/l/big1", 3<<20), big1.hashes())); o.Kind != store.KindConfirmed {
		t.Fatalf("confirm big1 = %+v", o)
	}
	doc = must[store.Document](t)(s.DocumentByCID(ctx, big1.hashes().SHA256))
	want := []string{big1.hashes().Midhash, big1.hashes().SHA256, big1.hashes().IPFS}
	sort.Strings(want)
	if !reflect.DeepEqual(doc.CIDs, want) || doc.FilePath() != "/l/big1" {
		t.Errorf("after confirm: filePath %q cids %v, want %v", doc.FilePath(), doc.CIDs, want)
	}
	if doc.CanonicalCID() != big1.hashes().IPFS {
		t.Errorf("canonical = %s, want big1's IPFS CID", doc.CanonicalCID())
	}
	mustCheck(t, s)
}

// A confirmed duplicate is promoted with the root's digests intact.
func TestRemove_PromotedConfirmedDuplicateKeepsDigests(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	r := ingest(t, s, stat("/l/a", 10), c).Root
	ingest(t, s, stat("/l/b", 10), c)
	must[store.Outcome](t)(s.Arrive(ctx, stat("/l/c", 10), c.hashes().Midhash)) // unconfirmed
	if o := must[store.Outcome](t)(s.RemovePath(ctx, "/l/a")); o.Path != "/l/b" {
		t.Fatalf("promoted %q, want the confirmed /l/b", o.Path)
	}
	if doc := must[store.Document](t)(s.Document(ctx, r)); len(doc.CIDs) != 3 {
		t.Errorf("cids = %v, want all three", doc.CIDs)
	}
	mustCheck(t, s)
}

// A primary whose confirmed bytes disagree with the root's own digests
// (held by confirmed duplicates) leaves the root instead of adding a
// second sha2-256 to it.
func TestConfirm_DisagreeingPrimarySplits(t *testing.T) {
	srv := storetest.Server(t)
	s := openOn(t, srv)
	a, b := content{5, 1}, content{5, 2}
	r := ingest(t, s, stat("/l/a", 10), a).Root
	ingest(t, s, stat("/l/a2", 10), a)
	// The lifecycle never confirms a primary twice; force the state in
	// which the primary's pass is pending again.
	storetest.SetPathField(t, rawClient(t, srv), "/l/a", "hashed", "0")
	o := must[store.Outcome](t)(s.Confirm(ctx, stat("/l/a", 10), b.hashes()))
	if o.Kind != store.KindSplit || o.Root == r {
		t.Fatalf("confirm disagreeing primary = %+v, want split off %s", o, r)
	}
	doc := must[store.Document](t)(s.Document(ctx, r))
	if doc.FilePath() != "/l/a2" || slices.Contains(doc.CIDs, b.hashes().SHA256) {
		t.Errorf("root kept %q %v", doc.FilePath(), doc.CIDs)
	}
	mustCheck(t, s)
}

func TestCheck_TwoComputedSHA256(t *testing.T) {
	s := storetest.New(t)
	r := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	mustCheck(t, s)
	other := content{2, 2}.hashes().SHA256
	if err := s.DebugSet(ctx, "file:"+string(r)+"/cids/"+other, "true"); err != nil {
		t.Fatal(err)
	}
	if err := s.DebugHSet(ctx, "fields:"+string(r), "/"+other, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.DebugSet(ctx, "cid:"+other, string(r)); err != nil {
		t.Fatal(err)
	}
	v := must[[]store.Violation](t)(s.Check(ctx))
	if !strings.Contains(fmt.Sprint(v), "2 sha2-256") {
		t.Errorf("Check = %v, want a violation for two computed sha2-256", v)
	}
	// The same member supplied from elsewhere is no violation.
	if err := s.DebugSAdd(ctx, "supplied:"+string(r), other); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
}

// A supplied sha2-256 never confirms a duplicate whose bytes differ from
// the root's own.
func TestConfirm_SuppliedDigestDoesNotConfirmDuplicate(t *testing.T) {
	s := storetest.New(t)
	a, b := content{3, 1}, content{3, 2}
	r := ingest(t, s, stat("/l/a", 10), a).Root
	if err := s.AddAlias(ctx, r, b.hashes().SHA256); err != nil {
		t.Fatal(err)
	}
	must[store.Outcome](t)(s.Arrive(ctx, stat("/l/b", 10), b.hashes().Midhash))
	o := must[store.Outcome](t)(s.Confirm(ctx, stat("/l/b", 10), b.hashes()))
	if o.Kind == store.KindConfirmed && o.Root == r {
		t.Fatalf("a supplied digest confirmed a duplicate with other bytes: %+v", o)
	}
	mustCheck(t, s)
}

// DocumentByCID is one script: a reader never sees a false 404 while the
// alias of an ambiguous midhash passes between roots.
func TestDocumentByCID_NoFalseNotFound(t *testing.T) {
	s := storetest.New(t)
	a, b := content{8, 1}, content{8, 2} // one midhash
	ingest(t, s, stat("/l/a", 10), a)
	ingest(t, s, stat("/l/b", 10), b)
	mid := a.hashes().Midhash
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// One of the two always holds the midhash.
			p, c := "/l/a", a
			if i%2 == 1 {
				p, c = "/l/b", b
			}
			if _, err := s.RemovePath(ctx, p); err != nil {
				t.Error(err)
				return
			}
			ingest(t, s, stat(p, 10), c)
		}
	}()
	for i := 0; i < 500; i++ {
		if _, err := s.DocumentByCID(ctx, mid); err != nil {
			t.Errorf("read %d: %v", i, err)
			break
		}
	}
	close(stop)
	wg.Wait()
	mustCheck(t, s)
}

// A document lists at most MaxDuplicates duplicates and says how many
// there are.
func TestDocument_DuplicatesBounded(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	r := ingest(t, s, stat("/l/a", 10), c).Root
	n := store.MaxDuplicates + 5
	for i := 0; i < n; i++ {
		ingest(t, s, stat(fmt.Sprintf("/l/d/%04d", i), 10), c)
	}
	doc := must[store.Document](t)(s.Document(ctx, r))
	if len(doc.Duplicates) != store.MaxDuplicates || doc.DuplicateCount != int64(n) {
		t.Fatalf("duplicates listed %d, count %d; want %d and %d", len(doc.Duplicates), doc.DuplicateCount, store.MaxDuplicates, n)
	}
	if doc.Duplicates[0] != "/l/d/0000" || !sort.StringsAreSorted(doc.Duplicates) {
		t.Errorf("duplicates are not the smallest paths in order: %v…", doc.Duplicates[:3])
	}
	if got := doc.Nested()["duplicateCount"]; got != int64(n) {
		t.Errorf("nested duplicateCount = %v", got)
	}
}

// A real file is preferred as primary over a symlink to it, whichever
// arrives first.
func TestConfirm_RealFilePreferredOverLink(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	link := stat("/l/link", 10)
	link.Link = true
	r := ingest(t, s, link, c).Root
	ingest(t, s, stat("/l/real", 10), c)
	doc := must[store.Document](t)(s.Document(ctx, r))
	if doc.FilePath() != "/l/real" || !reflect.DeepEqual(doc.Duplicates, []string{"/l/link"}) {
		t.Errorf("primary %q duplicates %v, want the real file first", doc.FilePath(), doc.Duplicates)
	}
	mustCheck(t, s)
	// Deleting the real file promotes the link (it is all there is).
	must[store.Outcome](t)(s.RemovePath(ctx, "/l/real"))
	if doc := must[store.Document](t)(s.Document(ctx, r)); doc.FilePath() != "/l/link" || len(doc.CIDs) != 3 {
		t.Errorf("after delete: %q %v", doc.FilePath(), doc.CIDs)
	}
	mustCheck(t, s)
}

// Replace moves a path onto a known one: the moved path's root keeps it,
// the target's old root lets go, one rename event is appended.
func TestReplace_AtomicReplace(t *testing.T) {
	s := storetest.New(t)
	old := ingest(t, s, stat("/l/f.mkv", 10), content{1, 1}).Root
	tmp := ingest(t, s, stat("/l/f.tmp", 20), content{2, 2}).Root
	if _, err := s.Rename(ctx, "/l/f.tmp", "/l/f.mkv"); !errors.Is(err, store.ErrPathExists) {
		t.Fatalf("Rename onto a known path = %v, want ErrPathExists", err)
	}
	before := must[[]store.Event](t)(s.Events(ctx, "", 1000))
	o := must[store.Outcome](t)(s.Replace(ctx, "/l/f.tmp", "/l/f.mkv"))
	if o.Kind != store.KindRenamed || o.Root != tmp {
		t.Fatalf("Replace = %+v, want renamed on %s", o, tmp)
	}
	st := must[store.PathState](t)(s.Path(ctx, "/l/f.mkv"))
	if st.Root != tmp {
		t.Errorf("f.mkv is on %s, want the temp file's root %s", st.Root, tmp)
	}
	if _, err := s.Document(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the target's old root survived: %v", err)
	}
	evs := lifecycle(must[[]store.Event](t)(s.Events(ctx, before[len(before)-1].ID, 100)))
	if len(evs) != 1 || evs[0].Type != store.EventRename || evs[0].OldPath != "/l/f.tmp" || evs[0].Path != "/l/f.mkv" {
		t.Errorf("events = %+v, want one rename", evs)
	}
	mustCheck(t, s)
}

func TestPathsOfInode(t *testing.T) {
	s := storetest.New(t)
	c := content{1, 1}
	for _, p := range []string{"/l/a", "/l/b"} {
		f := stat(p, 10)
		f.Dev, f.Ino = 7, 42
		ingest(t, s, f, c)
	}
	got := must[[]string](t)(s.PathsOfInode(ctx, 7, 42))
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"/l/a", "/l/b"}) {
		t.Errorf("PathsOfInode = %v", got)
	}
	must[store.Outcome](t)(s.Rename(ctx, "/l/b", "/l/c"))
	must[store.Outcome](t)(s.RemovePath(ctx, "/l/a"))
	if got := must[[]string](t)(s.PathsOfInode(ctx, 7, 42)); !reflect.DeepEqual(got, []string{"/l/c"}) {
		t.Errorf("after rename and remove: %v", got)
	}
	mustCheck(t, s)
}

// replay applies the key-set events of the feed from the start, as a
// consumer would, and returns each root's key-set.
func replay(t *testing.T, s *store.Store) map[store.RootID]map[string]bool {
	t.Helper()
	sets := map[store.RootID]map[string]bool{}
	f := s.Feed("")
	for {
		evs, err := f.Next(ctx, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return sets
		}
		for _, e := range evs {
			if !e.KeySet() {
				continue
			}
			set := sets[e.Root]
			if set == nil {
				set = map[string]bool{}
				sets[e.Root] = set
			}
			for _, c := range e.Added {
				set[c] = true
			}
			for _, c := range e.Removed {
				delete(set, c)
			}
			if e.Type == store.EventPurge || (e.Type == store.EventMerge && e.Into != "") {
				delete(sets, e.Root)
			}
		}
	}
}

// checkReplay: the canonical CIDs derived from the replayed feed are
// exactly those of the roots in file:__index__.
func checkReplay(t *testing.T, s *store.Store) {
	t.Helper()
	got := map[store.RootID]string{}
	for r, set := range replay(t, s) {
		if len(set) > 0 {
			got[r] = protocol.Canonical(keys(set))
		}
	}
	want := map[store.RootID]string{}
	for _, r := range must[[]store.RootID](t)(s.RootIDs(ctx)) {
		doc := must[store.Document](t)(s.Document(ctx, r))
		if len(doc.CIDs) > 0 {
			want[r] = doc.CanonicalCID()
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("canonical CIDs from the feed\n%v\nfrom the store\n%v", got, want)
	}
}

func TestFeed_ResumeAndTrim(t *testing.T) {
	srv := storetest.Server(t)
	s, err := store.Open(ctx, store.Options{URL: srv.URL(), Logger: storetest.Logger(t), EventsMaxLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ingest(t, s, stat("/l/a", 10), content{1, 1})
	f := s.Feed("")
	evs := must[[]store.Event](t)(f.Next(ctx, 2, 0))
	if len(evs) != 2 || f.Position() != evs[1].ID {
		t.Fatalf("Next = %+v at %s", evs, f.Position())
	}
	rest := must[[]store.Event](t)(s.Feed(evs[0].ID).Next(ctx, 100, 0))
	if len(rest) == 0 || rest[0].ID != evs[1].ID {
		t.Errorf("resume after %s starts at %+v", evs[0].ID, rest)
	}
	// Enough new events to trim the capped stream past the position.
	for i := 0; i < 300; i++ {
		ingest(t, s, stat(fmt.Sprintf("/l/x%d", i), 10), content{100 + i, 100 + i})
	}
	if _, err := f.Next(ctx, 100, 0); !errors.Is(err, store.ErrFeedTrimmed) {
		t.Fatalf("Next after trimming = %v, want ErrFeedTrimmed", err)
	}
	// The position moved to the head: the consumer carries on from there.
	if evs, err := f.Next(ctx, 100, 0); err != nil || len(evs) != 0 {
		t.Errorf("Next after resync = %v %v, want nothing new", evs, err)
	}
	ingest(t, s, stat("/l/new", 10), content{999, 999})
	if evs, err := f.Next(ctx, 100, 0); err != nil || len(evs) == 0 {
		t.Errorf("Next after a new file = %v %v", evs, err)
	}
}

// A newer extraction rewrites a primary's metadata, drops what the
// extractors no longer find, and leaves other writers' fields alone; an
// equal or older one writes nothing.
func TestSetExtracted_Versions(t *testing.T) {
	s := storetest.New(t)
	r := ingest(t, s, stat("/l/a", 10), content{1, 1}).Root
	owned := []string{"titles", "movieYear", "release"}
	v1 := store.Meta{Version: 1, Owned: owned, Fields: map[string]string{"titles/eng": "Wrong Title", "movieYear": "2010", "release/group": "GRP"}}
	if _, n, err := s.SetExtracted(ctx, "/l/a", v1); err != nil || n != 3 {
		t.Fatalf("first extraction wrote %d: %v", n, err)
	}
	if _, err := s.SetFields(ctx, r, map[string]string{"tmdb/id": "27205"}); err != nil {
		t.Fatal(err)
	}
	if _, n, _ := s.SetExtracted(ctx, "/l/a", v1); n != 0 {
		t.Errorf("the same version wrote %d fields again", n)
	}
	v2 := store.Meta{Version: 2, Owned: owned, Fields: map[string]string{"titles/eng": "Right Title", "movieYear": "2010"}}
	if _, n, err := s.SetExtracted(ctx, "/l/a", v2); err != nil || n != 2 {
		t.Fatalf("newer extraction wrote %d: %v", n, err)
	}
	doc := must[store.Document](t)(s.Document(ctx, r))
	want := map[string]string{"titles/eng": "Right Title", "movieYear": "2010", "tmdb/id": "27205"}
	for k, v := range want {
		if doc.Fields[k] != v {
			t.Errorf("%s = %q, want %q", k, doc.Fields[k], v)
		}
	}
	if _, ok := doc.Fields["release/group"]; ok {
		t.Error("a field the newer extraction lacks survived")
	}
	if st := must[store.PathState](t)(s.Path(ctx, "/l/a")); st.Extracted != 2 {
		t.Errorf("extracted version = %d", st.Extracted)
	}
	// A duplicate is no primary: nothing is written for it.
	ingest(t, s, stat("/l/b", 10), content{1, 1})
	if o, _, _ := s.SetExtracted(ctx, "/l/b", v2); o.Kind != store.KindGone {
		t.Errorf("SetExtracted(duplicate) = %v, want gone", o.Kind)
	}
	mustCheck(t, s)
}

// A path that is not UTF-8 is given exactly next to its lossy JSON form.
func TestDocument_NonUTF8Paths(t *testing.T) {
	s := storetest.New(t)
	bad := "/l/caf\xe9.mkv"
	r := ingest(t, s, stat(bad, 10), content{1, 1}).Root
	ingest(t, s, stat("/l/b\xff", 10), content{1, 1})
	m := must[store.Document](t)(s.Document(ctx, r)).Nested()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		FilePathBytes   []byte
		DuplicatesBytes [][]byte
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.FilePathBytes) != bad || len(got.DuplicatesBytes) != 1 || string(got.DuplicatesBytes[0]) != "/l/b\xff" {
		t.Errorf("exact names = %q %q", got.FilePathBytes, got.DuplicatesBytes)
	}
	ok := must[store.Document](t)(s.Document(ctx, ingest(t, s, stat("/l/plain", 20), content{2, 2}).Root)).Nested()
	if _, has := ok["filePathBytes"]; has {
		t.Error("a UTF-8 path got filePathBytes")
	}
}

// The inode index lists only inodes that may have another known name: a
// file's only name is left out (one key less per file) until a second
// name of its inode arrives, which brings the first in with it.
func TestPathsOfInode_OnlySharedInodes(t *testing.T) {
	s := storetest.New(t)
	file := func(p string, ino, nlink uint64) store.FileStat {
		f := stat(p, 10)
		f.Dev, f.Ino, f.Nlink = 7, ino, nlink
		return f
	}
	inode := func(ino uint64) []string {
		got := must[[]string](t)(s.PathsOfInode(ctx, 7, ino))
		sort.Strings(got)
		return got
	}
	tests := []struct {
		step string
		do   func()
		ino  uint64
		want []string
	}{
		{"a file's only name", func() { ingest(t, s, file("/l/a", 1, 1), content{1, 1}) }, 1, []string{}},
		{"a second hard link brings the first", func() { ingest(t, s, file("/l/a2", 1, 2), content{1, 1}) }, 1, []string{"/l/a", "/l/a2"}},
		{"a count not known is indexed", func() { ingest(t, s, file("/l/u", 2, 0), content{2, 2}) }, 2, []string{"/l/u"}},
		{"a symbolic link to a file's only name", func() {
			ingest(t, s, file("/l/t", 3, 1), content{3, 3})
			l := file("/l/t-link", 3, 1)
			l.Link = true
			ingest(t, s, l, content{3, 3})
		}, 3, []string{"/l/t", "/l/t-link"}},
		{"a rename of an only name indexes nothing", func() { must[store.Outcome](t)(s.Rename(ctx, "/l/t", "/l/t2")) }, 3, []string{"/l/t-link", "/l/t2"}},
		{"an only name renamed", func() {
			ingest(t, s, file("/l/o", 4, 1), content{4, 4})
			must[store.Outcome](t)(s.Rename(ctx, "/l/o", "/l/o2"))
		}, 4, []string{}},
		{"the same bytes written anew under a new inode", func() {
			must[store.Outcome](t)(s.Change(ctx, file("/l/u", 5, 1), content{2, 2}.hashes(), store.Meta{}))
		}, 2, []string{}},
		{"an inode's other name removed", func() { must[store.Outcome](t)(s.RemovePath(ctx, "/l/a2")) }, 1, []string{"/l/a"}},
	}
	for _, tt := range tests {
		tt.do()
		if got := inode(tt.ino); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: PathsOfInode(7, %d) = %q, want %q", tt.step, tt.ino, got, tt.want)
		}
		mustCheck(t, s)
	}
	if keys := dumpKeys(t, s); slices.Contains(keys, "inode:7:4") || slices.Contains(keys, "inode:7:5") {
		t.Errorf("inode keys of only names: %q", keys)
	}
}
