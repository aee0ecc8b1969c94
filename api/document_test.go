package api_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// The golden answers in testdata were written by the node before
// /api/meta's answer and search hits had types of their own
// (node.TestWire_Golden pins that the node still writes exactly them).
// Here they pin that Document and SearchResult carry every detail of
// them: read into the type and served again, each gives the same bytes.
func TestGolden_RoundTrip(t *testing.T) {
	for _, name := range []string{"meta_local.json", "meta_learned.json", "meta_peer.json", "meta_odd.json"} {
		t.Run(name, func(t *testing.T) {
			want := golden(t, name)
			var doc api.Document
			if err := json.Unmarshal(want, &doc); err != nil {
				t.Fatal(err)
			}
			b := &fakeBackend{docs: map[string]api.Document{doc.CanonicalCID: doc}}
			rec := serve(t, newServer(b, api.Options{}), "GET", "/api/meta/"+doc.CanonicalCID, nil)
			if name == "meta_odd.json" {
				// A metadata string that was not UTF-8 (here the value under
				// filePath/, which is an object) comes back with U+FFFD, all
				// JSON carries: encoding/json writes that as the character,
				// the node wrote the bytes it had as the escape.
				want = bytes.ReplaceAll(want, []byte(`\ufffd`), []byte("\uFFFD"))
			}
			if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
				t.Errorf("%d, served again:\n%s\nwant:\n%s", rec.Code, rec.Body, want)
			}
			// Encoded once ahead (as the node does for a cached
			// document), it is served with the same bytes.
			if err := doc.Encode(); err != nil {
				t.Fatal(err)
			}
			b.docs[doc.CanonicalCID] = doc
			again := serve(t, newServer(b, api.Options{}), "GET", "/api/meta/"+doc.CanonicalCID, nil)
			if again.Code != 200 || !bytes.Equal(again.Body.Bytes(), rec.Body.Bytes()) || again.Header().Get("Content-Type") != rec.Header().Get("Content-Type") {
				t.Errorf("encoded ahead: %d\n%s\nwant:\n%s", again.Code, again.Body, rec.Body)
			}
		})
	}
	for _, name := range []string{"search_federated.json", "search_capped.json"} {
		t.Run(name, func(t *testing.T) {
			want := golden(t, name)
			var res api.SearchResult
			if err := json.Unmarshal(want, &res); err != nil {
				t.Fatal(err)
			}
			b := &fakeBackend{search: func(string, int, string, bool) (api.SearchResult, error) { return res, nil }}
			rec := serve(t, newServer(b, api.Options{}), "GET", "/api/search?q=show+name&federated=1", nil)
			if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
				t.Errorf("%d, served again:\n%s\nwant:\n%s", rec.Code, rec.Body, want)
			}
		})
	}
}

// The golden local document read into a Document: what each part of the
// JSON is in Go.
func TestDocument_Unmarshal(t *testing.T) {
	var doc api.Document
	if err := json.Unmarshal(golden(t, "meta_local.json"), &doc); err != nil {
		t.Fatal(err)
	}
	const b, c = "12D3KooWGeD4rkdS8tmvFDPbdg2QkaQFyqpTY3m8F73RReYZ2fvJ", "12D3KooWQoRMj7aqJrqafVdvgyyycfrNp8Xwyt4X3c6criuEj7p8"
	if doc.Source != "local" || len(doc.CIDs) != 5 || doc.DuplicateCount != 2 || len(doc.Providers) != 3 ||
		!reflect.DeepEqual(doc.Peers, []string{b, c}) || len(doc.Learned) != 2 {
		t.Errorf("own keys: %+v", doc)
	}
	if doc.FilePath != "/lib/S\xe9ries/Show.Name.S01E02.Pilot.1080p.mkv" || string(doc.FilePathBytes) != doc.FilePath ||
		doc.Duplicates[1] != "/lib/copies/d\xfcplicate.mkv" {
		t.Errorf("filePath %q, bytes %q", doc.FilePath, doc.FilePathBytes)
	}
	if len(doc.DuplicatesBytes) != 2 || string(doc.DuplicatesBytes[1]) != "/lib/copies/d\xfcplicate.mkv" {
		t.Errorf("duplicatesBytes %q", doc.DuplicatesBytes)
	}
	for name, want := range map[string]api.Value{
		"sizeByte":  api.IntValue(1234567890),
		"mtime":     api.StringValue("2023-11-14T22:13:20.123456789Z"),
		"episodes":  api.ListValue(api.IntValue(2), api.IntValue(3)),
		"tmdb":      api.ObjectValue(api.Meta{"id": api.StringValue("27205")}),
		"fileinfo":  doc.Meta["fileinfo"], // checked below
		"videoType": api.StringValue("episode"),
	} {
		if got := doc.Meta[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("Meta[%q] = %+v, want %+v", name, got, want)
		}
	}
	if d := doc.Meta["fileinfo"].Object["duration"]; !reflect.DeepEqual(d, api.FloatValue(1422.5)) {
		t.Errorf("fileinfo/duration %+v", d)
	}
	for _, own := range []string{"cids", "canonical_cid", "source", "providers", "peers", "origin", "learned", "filePath", "filePathBytes"} {
		if _, ok := doc.Meta[own]; ok {
			t.Errorf("Meta holds the document's own %q", own)
		}
	}
	if got := doc.Origin[c]["episodeTitle"]; !reflect.DeepEqual(got, api.StringValue("Pilot C")) || len(doc.Origin) != 2 {
		t.Errorf("origin: %+v", doc.Origin)
	}

	// The odd shapes are metadata: names of the document's own keys with
	// other values, an origin that is not only peers'.
	if err := json.Unmarshal(golden(t, "meta_odd.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FilePath != "" || doc.Peers != nil || doc.Learned != nil || doc.Origin != nil ||
		!reflect.DeepEqual(doc.Meta["peers"], api.StringValue("not the peers")) || doc.Meta["filePath"].Kind != api.KindObject || doc.Meta["origin"].Kind != api.KindObject {
		t.Errorf("odd document: %+v", doc)
	}
}

// What MarshalJSON leaves out and what wins, for a document built by
// hand.
func TestDocument_Marshal(t *testing.T) {
	tests := []struct {
		name string
		doc  api.Document
		want string
	}{
		{"the zero document", api.Document{},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"source":""}`},
		{"no providers known, or none", api.Document{Source: "local", Providers: []string{}},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"providers":[],"source":"local"}`},
		{"metadata beside the own keys, sorted", api.Document{CanonicalCID: "c", CIDs: []string{"c"}, FilePath: "/a",
			Meta: api.Meta{"zz": api.StringValue("<&>"), "a": api.IntValue(-1), "peers": api.StringValue("a field"),
				"x": api.ObjectValue(api.Meta{"": api.FloatValue(0.5), "l": api.ListValue(api.StringValue("1"), api.ListValue())})}},
			`{"a":-1,"canonical_cid":"c","cids":["c"],"duplicateCount":0,"duplicates":[],"filePath":"/a","peers":"a field","source":"","x":{"":0.5,"l":["1",[]]},"zz":"\u003c\u0026\u003e"}`},
		{"own keys win", api.Document{Peers: []string{"p"}, Learned: map[string][]string{"c": nil},
			Origin: map[string]api.Meta{"p": {"n": api.FloatValue(1e21)}}, Meta: api.Meta{"peers": api.StringValue("x"), "source": api.StringValue("x")}},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"learned":{"c":[]},"origin":{"p":{"n":1e+21}},"peers":["p"],"source":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.doc)
			if err != nil || string(got) != tt.want {
				t.Errorf("got  %s (%v)\nwant %s", got, err, tt.want)
			}
			var back api.Document
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(back); string(again) != tt.want {
				t.Errorf("read back and written again: %s", again)
			}
		})
	}
	// JSON has no NaN: the answer is a 500 that says so, not a 200
	// without a body.
	b := &fakeBackend{docs: map[string]api.Document{held: {Meta: api.Meta{"d": api.FloatValue(math.NaN())}}}}
	rec := serve(t, newServer(b, api.Options{}), "GET", "/api/meta/"+held, nil)
	if rec.Code != 500 || !strings.Contains(errMsg(t, rec), "cannot encode") {
		t.Errorf("a NaN: %d %s", rec.Code, rec.Body)
	}
}

func TestValue_Unmarshal(t *testing.T) {
	for in, want := range map[string]api.Value{
		`"x"`:           api.StringValue("x"),
		`3000000`:       api.IntValue(3000000),
		`3e6`:           api.FloatValue(3e6),
		`-0.25`:         api.FloatValue(-0.25),
		`1e400`:         api.StringValue("1e400"),
		`true`:          api.StringValue("true"),
		`null`:          api.StringValue(""),
		`[1,"a",[]]`:    api.ListValue(api.IntValue(1), api.StringValue("a"), api.ListValue([]api.Value{}...)),
		`{"a":{"b":2}}`: api.ObjectValue(api.Meta{"a": api.ObjectValue(api.Meta{"b": api.IntValue(2)})}),
	} {
		var v api.Value
		if err := json.Unmarshal([]byte(in), &v); err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %+v (%v), want %+v", in, v, err, want)
		}
	}
}

// Search hits read whole numbers however they are written, and write
// them as integers.
func TestSearchHit_Unmarshal(t *testing.T) {
	var h api.SearchHit
	if err := json.Unmarshal([]byte(`{"cid":"c","cids":["c"],"size":3e6,"year":2001.0,"season":0,"episode":2,"source":"local","title":"t"}`), &h); err != nil {
		t.Fatal(err)
	}
	if h.Size != 3000000 || h.Year != 2001 || h.Season == nil || *h.Season != 0 || h.Episode == nil || *h.Episode != 2 {
		t.Errorf("%+v", h)
	}
	got, _ := json.Marshal(h)
	if want := `{"cid":"c","cids":["c"],"episode":2,"fileType":"","season":0,"size":3000000,"source":"local","title":"t","year":2001}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := json.Unmarshal([]byte(`{"size":1.5}`), &h); err == nil {
		t.Errorf("a size of 1.5 read as %d", h.Size)
	}
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
