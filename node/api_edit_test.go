package node_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/store"
)

// send makes a request with a body to the node's API and returns its
// answer.
func send(t testing.TB, n *node.Node, method, path, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+n.APIAddr()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.Bytes()
}

// field reads a flat field out of a document's JSON answer.
func field(t testing.TB, body []byte, name string) (string, bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for seg := range strings.SplitSeq(name, "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[seg]; !ok {
			return "", false
		}
	}
	return fmt.Sprint(v), true
}

// edited is a document answer's edited list.
func edited(t testing.TB, body []byte) []string {
	t.Helper()
	var d struct {
		Edited []string `json:"edited"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	return d.Edited
}

// A household corrects what a name made of its file: the edit is seen at
// once and lasts through an NFO written beside it and a restart;
// deleting it brings back what the NFO says; a peer's lookup gets the
// household's values; the feed names the fields.
func TestEdit_WinsAndLasts(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	clip := make([]byte, 40<<10)
	rand.Read(clip)
	path := filepath.Join(lib, "party_1964.mp4")
	writeOld(t, path, clip)
	redis := ""
	data := ""
	a := startNodeWith(t, lib, func(c *node.Config) { redis, data = c.RedisURL, c.DataDir })
	cid := canonicalOf(t, path)

	resp, body := send(t, a, "PUT", "/api/meta/"+cid+"/titles/eng", "text/plain", []byte("Grandma's birthday"))
	if resp.StatusCode != 200 {
		t.Fatalf("PUT: %s %s", resp.Status, body)
	}
	resp, body = send(t, a, "PATCH", "/api/meta/"+cid, "application/json", []byte(`{"videoType": "other", "movieYear": null, "recorded": 1964}`))
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH: %s %s", resp.Status, body)
	}
	want := map[string]string{"titles/eng": "Grandma's birthday", "videoType": "other", "recorded": "1964"}
	check := func(when string, n *node.Node, want map[string]string, gone ...string) {
		t.Helper()
		_, body := do(t, n, "GET", "/api/meta/"+cid, nil)
		for k, v := range want {
			if got, _ := field(t, body, k); got != v {
				t.Errorf("%s: %s = %q, want %q", when, k, got, v)
			}
		}
		for _, k := range gone {
			if got, ok := field(t, body, k); ok {
				t.Errorf("%s: %s = %q, want none", when, k, got)
			}
		}
	}
	check("after the edits", a, want, "movieYear")
	if got := edited(t, body); strings.Join(got, " ") != "recorded titles/eng videoType" {
		t.Errorf("edited %q", got)
	}

	// The search index follows.
	waiting.Until(t, "a search to find the edited title", func() string {
		_, body := do(t, a, "GET", "/api/search?q=grandma", nil)
		if !strings.Contains(string(body), cid) {
			return string(body)
		}
		return ""
	})

	// The feed names what each edit changed.
	evs, err := a.Store().Events(t.Context(), "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range evs {
		if e.Type == store.EventChange && e.Root != "" {
			keys = append(keys, strings.Join(e.Keys, " "))
		}
	}
	if strings.Join(keys, "|") != "titles/eng|movieYear recorded videoType" { // sorted
		t.Errorf("the feed's edit entries name %q", keys)
	}

	// A peer's lookup gets the household's values in its record.
	b := p2pNode(t, nil)
	if err := connect(b, a); err != nil {
		t.Fatal(err)
	}
	check("a peer's lookup", b, map[string]string{"titles/eng": "Grandma's birthday", "videoType": "other"})

	// An NFO written beside the file is read (its plot shows), and the
	// edited title stands.
	nfo := `<?xml version="1.0"?><movie><title>Summer 1964</title><plot>The garden.</plot></movie>`
	if err := os.WriteFile(filepath.Join(lib, "party_1964.nfo"), []byte(nfo), 0o644); err != nil {
		t.Fatal(err)
	}
	waiting.Until(t, "the NFO's plot", func() string {
		_, body := do(t, a, "GET", "/api/meta/"+cid, nil)
		if p, _ := field(t, body, "plot/eng"); p != "The garden." {
			return "plot " + p
		}
		return ""
	})
	check("after the NFO", a, want)

	// A restart keeps the edits.
	a.Close()
	a = startNodeWith(t, lib, func(c *node.Config) { c.RedisURL, c.DataDir = redis, data })
	check("after a restart", a, want)

	// DELETE of the edit: the NFO's title comes back.
	resp, body = send(t, a, "DELETE", "/api/meta/"+cid+"/titles/eng", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("DELETE: %s %s", resp.Status, body)
	}
	check("after the title's edit went", a, map[string]string{"titles/eng": "Summer 1964", "videoType": "other"})
	if got := edited(t, body); strings.Join(got, " ") != "recorded videoType" {
		t.Errorf("edited %q after the DELETE", got)
	}
}

// Every refusal of the write API, each with its status and a JSON error
// that says why; a refused edit changes nothing.
func TestEdit_Refusals(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	data := make([]byte, 30<<10)
	rand.Read(data)
	path := filepath.Join(lib, "Quiet.Harbour.2015.mkv")
	writeOld(t, path, data)
	n := startNodeWith(t, lib, nil)
	cid := canonicalOf(t, path)
	_, before := do(t, n, "GET", "/api/meta/"+cid, nil)

	many := map[string]string{}
	for i := range 257 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	unknown := "bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct {
		name, method, path, ctype, body string
		code                            int
		says                            string
	}{
		{"the path", "PUT", "/api/meta/" + cid + "/filePath", "", "/x", 403, `"filePath"`},
		{"a member", "DELETE", "/api/meta/" + cid + "/cids/" + cid, "", "", 403, "cids/"},
		{"duplicates by PATCH", "PATCH", "/api/meta/" + cid, "application/json", `{"duplicates": "x"}`, 403, `"duplicates"`},
		{"a peer's word", "PATCH", "/api/meta/" + cid, "application/json", `{"origin": {"12D3KooWX": {"title": "x"}}}`, 403, "origin/"},
		{"the node's still", "PUT", "/api/meta/" + cid + "/still", "", unknown, 403, `"still"`},
		{"the node's still dropped", "DELETE", "/api/meta/" + cid + "/still", "", "", 403, `"still"`},
		{"a long key", "PUT", "/api/meta/" + cid + "/" + strings.Repeat("k", 513), "", "v", 413, "at most 512"},
		{"a long value", "PUT", "/api/meta/" + cid + "/plot", "", strings.Repeat("v", 64<<10+1), 413, "65536"},
		{"257 keys", "PATCH", "/api/meta/" + cid, "application/json", string(manyJSON), 413, "at most 256"},
		{"a body of more than 1 MiB", "PATCH", "/api/meta/" + cid, "application/json", `{"plot": "` + strings.Repeat("v", 1<<20) + `"}`, 413, "1048576"},
		{"not JSON", "PATCH", "/api/meta/" + cid, "application/json", `{"plot": `, 400, "not a JSON object"},
		{"a JSON list", "PATCH", "/api/meta/" + cid, "application/json", `["plot"]`, 400, "not a JSON object"},
		{"a JSON object by PUT", "PUT", "/api/meta/" + cid + "/plot", "application/json", `{"a": 1}`, 400, "string or a number"},
		{"another type", "PUT", "/api/meta/" + cid + "/plot", "image/png", "x", 400, "Content-Type"},
		{"a space in a key", "PATCH", "/api/meta/" + cid, "application/json", `{"my plot": "x"}`, 400, "space"},
		{"an unknown CID", "PUT", "/api/meta/" + unknown + "/plot", "", "x", 404, unknown},
		{"a malformed CID", "PUT", "/api/meta/notacid/plot", "", "x", 400, "CID"},
		{"a batch of 1001", "POST", "/api/meta/batch", "application/json", "[" + strings.Repeat(`{"cid":"`+cid+`","delete":["plot"]},`, 1000) + `{"cid":"` + cid + `","delete":["plot"]}]`, 413, "at most 1000"},
		{"a batch that is not a list", "POST", "/api/meta/batch", "application/json", `{"cid":"x"}`, 400, "JSON list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, n, tc.method, tc.path, tc.ctype, []byte(tc.body))
			var e struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != tc.code || !strings.Contains(e.Error, tc.says) {
				t.Errorf("%s %s: %s %.300s, want %d saying %q", tc.method, tc.name, resp.Status, body, tc.code, tc.says)
			}
		})
	}
	if _, after := do(t, n, "GET", "/api/meta/"+cid, nil); !bytes.Equal(before, after) {
		t.Errorf("refused edits changed the document:\n%s\nwas\n%s", after, before)
	}
}

// A batch edits each file as one, answering each item as its own
// request would; a CID known only from peers is refused 409 there.
func TestEdit_Batch(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	var cids []string
	for _, name := range []string{"a.mkv", "b.mkv"} {
		data := make([]byte, 20<<10)
		rand.Read(data)
		writeOld(t, filepath.Join(lib, name), data)
	}
	n := startNodeWith(t, lib, nil)
	for _, name := range []string{"a.mkv", "b.mkv"} {
		cids = append(cids, canonicalOf(t, filepath.Join(lib, name)))
	}
	peerOnly := "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	if _, err := n.Store().MergeRecord(t.Context(), "12D3KooWPeerOfTheTest", []string{peerOnly}, map[string]string{"titles/eng": "Theirs"}); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`[{"cid":%q,"set":{"videoType":"other","titles":{"eng":"Home A"}}},
		{"cid":%q,"set":{"videoType":"other"},"delete":["movieYear"]},
		{"cid":%q,"set":{"titles/eng":"Ours"}},
		{"cid":%q,"set":{"filePath":"/x","plot":"y"}}]`, cids[0], cids[1], peerOnly, cids[1])
	resp, out := send(t, n, "POST", "/api/meta/batch", "application/json", []byte(body))
	if resp.StatusCode != 200 {
		t.Fatalf("batch: %s %s", resp.Status, out)
	}
	var ans struct {
		Items []struct {
			CID      string          `json:"cid"`
			Status   int             `json:"status"`
			Error    string          `json:"error"`
			Document json.RawMessage `json:"document"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatal(err)
	}
	codes := []int{}
	for _, it := range ans.Items {
		codes = append(codes, it.Status)
	}
	if fmt.Sprint(codes) != "[200 200 409 403]" {
		t.Fatalf("the items' statuses %v, want [200 200 409 403]: %s", codes, out)
	}
	if v, _ := field(t, ans.Items[0].Document, "titles/eng"); v != "Home A" {
		t.Errorf("item 0's title %q", v)
	}
	// The refused item wrote nothing, not even its allowed field.
	_, doc := do(t, n, "GET", "/api/meta/"+cids[1], nil)
	if v, ok := field(t, doc, "plot"); ok {
		t.Errorf("a refused item wrote plot = %q", v)
	}
}
