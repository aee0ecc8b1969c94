package store_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// A household's edit stands through later extractions (a rescan, an NFO
// change, a new extractor version), which keep what they found aside;
// dropping the edit brings that back; the feed names what changed.
func TestEdit_StandsAndComesBack(t *testing.T) {
	s := storetest.New(t)
	o := ingest(t, s, stat("/l/clip_1964.mp4", 10), content{1, 1})
	r := o.Root
	owned := []string{"titles", "movieYear", "videoType"}
	v1 := store.Meta{Version: 1, Owned: owned, Fields: map[string]string{"titles/eng": "clip", "movieYear": "1964", "videoType": "movie"}}
	if _, _, err := s.SetExtracted(ctx, "/l/clip_1964.mp4", v1); err != nil {
		t.Fatal(err)
	}
	doc := must[store.Document](t)(s.Document(ctx, r))
	cid := doc.CIDs[0]

	root, changed, err := s.Edit(ctx, cid, map[string]string{"titles/eng": "Grandma's birthday", "videoType": "other", "note": "kitchen"}, []string{"movieYear"})
	if err != nil || root != r {
		t.Fatalf("Edit: %v (root %s, want %s)", err, root, r)
	}
	if want := []string{"movieYear", "note", "titles/eng", "videoType"}; !slices.Equal(changed, want) {
		t.Errorf("changed %q, want %q", changed, want)
	}
	check := func(when string, want map[string]string, edited []string) {
		t.Helper()
		doc := must[store.Document](t)(s.Document(ctx, r))
		for k, v := range want {
			if got, ok := doc.Fields[k]; v == "" && ok || v != "" && got != v {
				t.Errorf("%s: %s = %q, want %q", when, k, got, v)
			}
		}
		if !slices.Equal(doc.Edited, edited) {
			t.Errorf("%s: edited %q, want %q", when, doc.Edited, edited)
		}
		mustCheck(t, s)
	}
	check("after the edit", map[string]string{"titles/eng": "Grandma's birthday", "videoType": "other", "note": "kitchen", "movieYear": ""},
		[]string{"note", "titles/eng", "videoType"})

	// A newer extraction (the name read by a new version) and an NFO
	// change (the same version written again) leave the edits alone.
	v2 := store.Meta{Version: 2, Owned: owned, Fields: map[string]string{"titles/eng": "Clip", "movieYear": "1964", "videoType": "movie"}}
	if _, _, err := s.SetExtracted(ctx, "/l/clip_1964.mp4", v2); err != nil {
		t.Fatal(err)
	}
	nfo := store.Meta{Version: 2, Refresh: true, Owned: owned, Fields: map[string]string{"titles/eng": "From the NFO", "videoType": "movie"}}
	if _, _, err := s.SetExtracted(ctx, "/l/clip_1964.mp4", nfo); err != nil {
		t.Fatal(err)
	}
	check("after new extractions", map[string]string{"titles/eng": "Grandma's birthday", "videoType": "other", "note": "kitchen"},
		[]string{"note", "titles/eng", "videoType"})

	// Dropping the edits: the last extraction's values come back; a field
	// it does not give (movieYear, gone from the NFO's) and a field of the
	// household's alone (note) go.
	if _, changed, err = s.Edit(ctx, cid, nil, []string{"titles/eng", "videoType", "note", "movieYear"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"note", "titles/eng", "videoType"}; !slices.Equal(changed, want) {
		t.Errorf("changed %q, want %q", changed, want)
	}
	check("after the edits went", map[string]string{"titles/eng": "From the NFO", "videoType": "movie", "note": "", "movieYear": ""}, nil)

	evs := must[[]store.Event](t)(s.Events(ctx, "", 1000))
	var edits [][]string
	for _, e := range evs {
		if e.Type == store.EventChange && e.Root == r {
			edits = append(edits, e.Keys)
		}
	}
	if len(edits) != 2 || !slices.Equal(edits[1], []string{"note", "titles/eng", "videoType"}) {
		t.Errorf("the feed's edit entries: %q", edits)
	}
}

// What may not be edited, and whose files.
func TestEdit_Refused(t *testing.T) {
	s := storetest.New(t)
	o := ingest(t, s, stat("/l/a", 10), content{1, 1})
	cid := must[store.Document](t)(s.Document(ctx, o.Root)).CIDs[0]
	peerOnly := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	if _, err := s.MergeRecord(ctx, "12D3KooWPeerOfTheTest", []string{peerOnly}, map[string]string{"titles/eng": "Theirs"}); err != nil {
		t.Fatal(err)
	}
	before := must[store.Document](t)(s.DocumentByCID(ctx, peerOnly))
	for _, tc := range []struct {
		name string
		cid  string
		set  map[string]string
		del  []string
		want error
	}{
		{"the path", cid, map[string]string{"filePath": "/x"}, nil, store.ErrReservedField},
		{"a member", cid, nil, []string{"cids/" + cid}, store.ErrReservedField},
		{"duplicates", cid, map[string]string{"duplicates": "x"}, nil, store.ErrReservedField},
		{"size", cid, map[string]string{"sizeByte": "1"}, nil, store.ErrReservedField},
		{"a peer's word", cid, map[string]string{"origin/12D3KooWX/titles/eng": "x"}, nil, store.ErrReservedField},
		{"the node's still", cid, map[string]string{store.StillField: cid}, nil, store.ErrReservedField},
		{"the node's still dropped", cid, nil, []string{store.StillField}, store.ErrReservedField},
		{"an empty segment", cid, map[string]string{"titles//eng": "x"}, nil, store.ErrInvalidField},
		{"a space", cid, map[string]string{"my title": "x"}, nil, store.ErrInvalidField},
		{"set and deleted", cid, map[string]string{"a": "x"}, []string{"a"}, store.ErrInvalidField},
		{"a long name", cid, map[string]string{strings.Repeat("k", store.MaxEditKey+1): "x"}, nil, store.ErrTooLarge},
		{"a long value", cid, map[string]string{"plot": strings.Repeat("v", store.MaxEditValue+1)}, nil, store.ErrTooLarge},
		{"a peer's file", peerOnly, map[string]string{"titles/eng": "Ours"}, nil, store.ErrNotLocal},
		{"an unknown CID", "bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", map[string]string{"a": "x"}, nil, store.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := s.Edit(ctx, tc.cid, tc.set, tc.del); !errors.Is(err, tc.want) {
				t.Errorf("Edit: %v, want %v", err, tc.want)
			}
		})
	}
	if doc := must[store.Document](t)(s.DocumentByCID(ctx, peerOnly)); !maps.Equal(doc.Fields, before.Fields) {
		t.Errorf("a refused edit changed a peer's file: %v, was %v", doc.Fields, before.Fields)
	}
	mustCheck(t, s)
}
