package model_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/metamesh/node/model"
)

// The golden answers were written by the node before /api/meta's answer
// and search hits had types of their own (node.TestWire_Golden pins that
// the node still writes exactly them). Read into the model's types and
// encoded again as an answer, each gives the same bytes; a document
// encoded ahead (Encode, as the node does for a cached one) keeps them.
func TestGolden_EncodeAnswer(t *testing.T) {
	for _, name := range []string{"meta_local.json", "meta_learned.json", "meta_peer.json", "meta_odd.json"} {
		t.Run(name, func(t *testing.T) {
			want := golden(t, name)
			var doc model.Document
			if err := json.Unmarshal(want, &doc); err != nil {
				t.Fatal(err)
			}
			if name == "meta_odd.json" {
				// A metadata string that was not UTF-8 comes back with
				// U+FFFD, all JSON carries: encoding/json writes that as
				// the character, the node wrote the bytes it had as the
				// escape.
				want = bytes.ReplaceAll(want, []byte(`\ufffd`), []byte("\uFFFD"))
			}
			got, err := model.EncodeAnswer(doc)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("encoded again (%v):\n%s\nwant:\n%s", err, got, want)
			}
			if doc.Encoded() != nil {
				t.Errorf("Encoded before Encode: %s", doc.Encoded())
			}
			if err := doc.Encode(); err != nil || !bytes.Equal(doc.Encoded(), want) {
				t.Errorf("Encode (%v):\n%s\nwant:\n%s", err, doc.Encoded(), want)
			}
		})
	}
	for _, name := range []string{"search_federated.json", "search_capped.json"} {
		t.Run(name, func(t *testing.T) {
			want := golden(t, name)
			var res model.SearchResult
			if err := json.Unmarshal(want, &res); err != nil {
				t.Fatal(err)
			}
			if got, err := model.EncodeAnswer(res); err != nil || !bytes.Equal(got, want) {
				t.Errorf("encoded again (%v):\n%s\nwant:\n%s", err, got, want)
			}
		})
	}
}

// The golden local document read into a Document: what each part of the
// JSON is in Go.
func TestDocument_Unmarshal(t *testing.T) {
	var doc model.Document
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
	for name, want := range map[string]model.Value{
		"sizeByte":  model.IntValue(1234567890),
		"mtime":     model.StringValue("2023-11-14T22:13:20.123456789Z"),
		"episodes":  model.ListValue(model.IntValue(2), model.IntValue(3)),
		"tmdb":      model.ObjectValue(model.Meta{"id": model.StringValue("27205")}),
		"fileinfo":  doc.Meta["fileinfo"], // checked below
		"videoType": model.StringValue("episode"),
	} {
		if got := doc.Meta[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("Meta[%q] = %+v, want %+v", name, got, want)
		}
	}
	if d := doc.Meta["fileinfo"].Object["duration"]; !reflect.DeepEqual(d, model.FloatValue(1422.5)) {
		t.Errorf("fileinfo/duration %+v", d)
	}
	for _, own := range []string{"cids", "canonical_cid", "source", "providers", "peers", "origin", "learned", "filePath", "filePathBytes"} {
		if _, ok := doc.Meta[own]; ok {
			t.Errorf("Meta holds the document's own %q", own)
		}
	}
	if got := doc.Origin[c]["episodeTitle"]; !reflect.DeepEqual(got, model.StringValue("Pilot C")) || len(doc.Origin) != 2 {
		t.Errorf("origin: %+v", doc.Origin)
	}

	// The odd shapes are metadata: names of the document's own keys with
	// other values, an origin that is not only peers'.
	if err := json.Unmarshal(golden(t, "meta_odd.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FilePath != "" || doc.Peers != nil || doc.Learned != nil || doc.Origin != nil ||
		!reflect.DeepEqual(doc.Meta["peers"], model.StringValue("not the peers")) || doc.Meta["filePath"].Kind != model.KindObject || doc.Meta["origin"].Kind != model.KindObject {
		t.Errorf("odd document: %+v", doc)
	}
}

// What MarshalJSON leaves out and what wins, for a document built by
// hand.
func TestDocument_Marshal(t *testing.T) {
	tests := []struct {
		name string
		doc  model.Document
		want string
	}{
		{"the zero document", model.Document{},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"source":""}`},
		{"no providers known, or none", model.Document{Source: "local", Providers: []string{}},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"providers":[],"source":"local"}`},
		{"metadata beside the own keys, sorted", model.Document{CanonicalCID: "c", CIDs: []string{"c"}, FilePath: "/a",
			Meta: model.Meta{"zz": model.StringValue("<&>"), "a": model.IntValue(-1), "peers": model.StringValue("a field"),
				"x": model.ObjectValue(model.Meta{"": model.FloatValue(0.5), "l": model.ListValue(model.StringValue("1"), model.ListValue())})}},
			`{"a":-1,"canonical_cid":"c","cids":["c"],"duplicateCount":0,"duplicates":[],"filePath":"/a","peers":"a field","source":"","x":{"":0.5,"l":["1",[]]},"zz":"\u003c\u0026\u003e"}`},
		{"own keys win", model.Document{Peers: []string{"p"}, Learned: map[string][]string{"c": nil},
			Origin: map[string]model.Meta{"p": {"n": model.FloatValue(1e21)}}, Meta: model.Meta{"peers": model.StringValue("x"), "source": model.StringValue("x")}},
			`{"canonical_cid":"","cids":[],"duplicateCount":0,"duplicates":[],"learned":{"c":[]},"origin":{"p":{"n":1e+21}},"peers":["p"],"source":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.doc)
			if err != nil || string(got) != tt.want {
				t.Errorf("got  %s (%v)\nwant %s", got, err, tt.want)
			}
			var back model.Document
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(back); string(again) != tt.want {
				t.Errorf("read back and written again: %s", again)
			}
		})
	}
}

func TestValue_Unmarshal(t *testing.T) {
	for in, want := range map[string]model.Value{
		`"x"`:           model.StringValue("x"),
		`3000000`:       model.IntValue(3000000),
		`3e6`:           model.FloatValue(3e6),
		`-0.25`:         model.FloatValue(-0.25),
		`1e400`:         model.StringValue("1e400"),
		`true`:          model.StringValue("true"),
		`null`:          model.StringValue(""),
		`[1,"a",[]]`:    model.ListValue(model.IntValue(1), model.StringValue("a"), model.ListValue([]model.Value{}...)),
		`{"a":{"b":2}}`: model.ObjectValue(model.Meta{"a": model.ObjectValue(model.Meta{"b": model.IntValue(2)})}),
	} {
		var v model.Value
		if err := json.Unmarshal([]byte(in), &v); err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %+v (%v), want %+v", in, v, err, want)
		}
	}
}

// Search hits read whole numbers however they are written, and write
// them as integers.
func TestSearchHit_Unmarshal(t *testing.T) {
	var h model.SearchHit
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

// golden is one of the HTTP API's answers pinned in api/testdata: the
// model's JSON forms are the API's wire contract.
func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "api", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
