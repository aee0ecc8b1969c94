package api_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
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

// JSON has no NaN: a document holding one is answered with a 500 that
// says so, not a 200 without a body.
func TestMeta_NaNIs500(t *testing.T) {
	b := &fakeBackend{docs: map[string]api.Document{held: {Meta: api.Meta{"d": api.FloatValue(math.NaN())}}}}
	rec := serve(t, newServer(b, api.Options{}), "GET", "/api/meta/"+held, nil)
	if rec.Code != 500 || !strings.Contains(errMsg(t, rec), "cannot encode") {
		t.Errorf("a NaN: %d %s", rec.Code, rec.Body)
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
