package federation

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// newDocument types the fields it knows, at top level and in what each
// peer said, and nothing else; JSON has no NaN, so such a value stays
// the string it is.
func TestNewDocument_Typing(t *testing.T) {
	t.Parallel()
	const peer = "12D3KooWpeer"
	d := store.Document{Fields: map[string]string{
		"filePath": "/lib/a.mkv", "sizeByte": "26415", "season": "1", "episode": "2", "movieYear": "2005",
		"mtime": "1700000000000000000", "episodes/0": "1", "episodes/1": "2", "title": "1984",
		"release/cd": "2", "release/group": "GRP", "fileinfo/duration": "1422.5",
		"fileinfo/streamdetails/video/0/width": "1920", "fileinfo/streamdetails/video/0/codec": "h264",
		"origin/" + peer + "/season": "3", "origin/" + peer + "/sizeByte": "x", "origin/" + peer + "/fileinfo/duration": "NaN",
		"tmdb/id": "27205", "rating": "8.369", "imdbid": "tt1375666",
	}, CIDs: []string{"bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am"}, Peers: []string{peer}}
	doc := newDocument(d, "local", []string{"12D3KooWself", peer})
	want := model.Meta{
		"sizeByte": model.IntValue(26415), "season": model.IntValue(1), "episode": model.IntValue(2), "movieYear": model.IntValue(2005),
		"mtime": model.StringValue("2023-11-14T22:13:20Z"), "episodes": model.ListValue(model.IntValue(1), model.IntValue(2)),
		"title":   model.StringValue("1984"),
		"release": model.ObjectValue(model.Meta{"cd": model.IntValue(2), "group": model.StringValue("GRP")}),
		"fileinfo": model.ObjectValue(model.Meta{"duration": model.FloatValue(1422.5), "streamdetails": model.ObjectValue(model.Meta{
			"video": model.ListValue(model.ObjectValue(model.Meta{"width": model.IntValue(1920), "codec": model.StringValue("h264")}))})}),
		"tmdb":   model.ObjectValue(model.Meta{"id": model.StringValue("27205")}),
		"rating": model.FloatValue(8.369), "imdbid": model.StringValue("tt1375666"),
	}
	if !reflect.DeepEqual(doc.Meta, want) {
		t.Errorf("meta\n got  %+v\n want %+v", doc.Meta, want)
	}
	wantOrigin := map[string]model.Meta{peer: {"season": model.IntValue(3), "sizeByte": model.StringValue("x"),
		"fileinfo": model.ObjectValue(model.Meta{"duration": model.StringValue("NaN")})}}
	if !reflect.DeepEqual(doc.Origin, wantOrigin) {
		t.Errorf("origin\n got  %+v\n want %+v", doc.Origin, wantOrigin)
	}
	if doc.FilePath != "/lib/a.mkv" || doc.FilePathBytes != nil || doc.Source != "local" || len(doc.Providers) != 2 ||
		!reflect.DeepEqual(doc.Peers, []string{peer}) || doc.CanonicalCID != d.CIDs[0] {
		t.Errorf("own fields: %+v", doc)
	}
}

// The document's own keys never stay in Meta, and a field named like one
// the document leaves out is metadata; paths that are not UTF-8 come with
// their exact bytes.
func TestNewDocument_OwnKeys(t *testing.T) {
	t.Parallel()
	d := store.Document{Fields: map[string]string{
		"filePath": "/lib/S\xe9ries/a.mkv", "peers": "a field", "providers": "another", "source": "hidden",
	}, Duplicates: []string{"/lib/b.mkv", "/lib/\xff.mkv"}, DuplicateCount: 2}
	doc := newDocument(d, "local", nil)
	if !reflect.DeepEqual(doc.Meta, model.Meta{"peers": model.StringValue("a field"), "providers": model.StringValue("another")}) {
		t.Errorf("meta %+v", doc.Meta)
	}
	if string(doc.FilePathBytes) != d.FilePath() || doc.FilePath != d.FilePath() ||
		!reflect.DeepEqual(doc.DuplicatesBytes, [][]byte{[]byte("/lib/b.mkv"), []byte("/lib/\xff.mkv")}) {
		t.Errorf("paths %q %q %q", doc.FilePath, doc.FilePathBytes, doc.DuplicatesBytes)
	}
	d.Peers = []string{"12D3KooWpeer"}
	doc = newDocument(d, "local", []string{"12D3KooWself"})
	if len(doc.Meta) != 0 {
		t.Errorf("with peers and providers of its own, meta %+v", doc.Meta)
	}
	// Nothing of the store's document is shared with the answer (the
	// store may cache its documents).
	doc.Duplicates[0] = "changed"
	doc.Peers[0] = "changed"
	if d.Duplicates[0] != "/lib/b.mkv" || d.Peers[0] != "12D3KooWpeer" {
		t.Errorf("the answer shares the store's slices: %q %q", d.Duplicates, d.Peers)
	}
}
