package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
)

// TestLearn_PeersFillIn: B holds the same bytes as A, C and H under a
// name of no use and no NFO; A and C say the same of them, H says
// otherwise. B shows A's and C's title, plot, IMDb ID and poster,
// labelled as theirs; B's own NFO and edits win; B provides none of
// their words.
func TestLearn_PeersFillIn(t *testing.T) {
	t.Parallel()
	video := make([]byte, 48<<10)
	rand.Read(video)
	posterOf := func() []byte {
		img := image.NewRGBA(image.Rect(0, 0, 60, 90))
		rand.Read(img.Pix)
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	poster, forged := posterOf(), posterOf()
	household := func(title, plot, imdb string, poster []byte) (*node.Node, string) {
		lib := t.TempDir()
		dir := filepath.Join(lib, "Film")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeOld(t, filepath.Join(dir, "film.mkv"), video)
		writeOld(t, filepath.Join(dir, "poster.png"), poster)
		writeOld(t, filepath.Join(dir, "film.nfo"), fmt.Appendf(nil, `<movie><title>%s</title><year>2015</year><plot>%s</plot><uniqueid type="imdb">%s</uniqueid></movie>`, title, plot, imdb))
		n := startNodeWith(t, lib, nil)
		return n, canonicalOf(t, filepath.Join(dir, "poster.png"))
	}
	// H's poster is another image: with the same bytes as A's and C's it
	// would be as much H's word as theirs.
	a, art := household("Lighthouse Harbour", "Keepers of a light.", "tt0123456", poster)
	c, _ := household("Lighthouse Harbour", "Keepers of a light.", "tt0123456", poster)
	h, _ := household("Forged Title", "Not what it is.", "tt0999999", forged)

	libB := t.TempDir()
	b, logs := startNodeLogged(t, libB, func(cfg *node.Config) { cfg.LearnIdleInterval = 100 * time.Millisecond })
	for _, n := range []*node.Node{a, c, h} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}
	// The file reaches B once the DHT names all three as its providers,
	// so that B's one question about it asks them all.
	fileCID := canonicalOf(t, filepath.Join(a.Ingester().Libraries()[0].Dir, "Film", "film.mkv"))
	waiting.Until(t, "A, C and H providing the file", func() string {
		ps, err := b.FindProviders(waiting.Context(t), fileCID, 0)
		if err != nil || !slices.Contains(ps, a.PeerID()) || !slices.Contains(ps, c.PeerID()) || !slices.Contains(ps, h.PeerID()) {
			return fmt.Sprintf("%v %v", ps, err)
		}
		return ""
	})
	writeOld(t, filepath.Join(libB, "quietharb.mkv"), video)

	agreed := []string{a.PeerID(), c.PeerID()}
	var doc api.Document
	// A GET of the CID before B has the file looks it up, and keeps the
	// first household's answer: the learner still asks them all.
	waiting.Until(t, "B showing what A and C say of its file", func() string {
		if msg := metaOf(t, b, fileCID, &doc); msg != "" {
			return msg
		}
		meta := doc.Meta
		switch {
		case doc.Source != "local":
			return "not yet B's own file: " + doc.Source
		case meta["titles"].Object["eng"].Str != "Lighthouse Harbour" || meta["imdbid"].Str != "tt0123456" ||
			meta["plot"].Object["eng"].Str != "Keepers of a light." || meta["art"].Object["poster"].Str != art:
			return fmt.Sprintf("shown: %v", meta)
		case !slices.Contains(agreed, doc.ShownFrom["titles/eng"]) || !slices.Contains(agreed, doc.ShownFrom["imdbid"]) || !slices.Contains(agreed, doc.ShownFrom["art/poster"]):
			return fmt.Sprintf("shown from: %v", doc.ShownFrom)
		}
		return ""
	})
	if name := doc.PeerNames[doc.ShownFrom["titles/eng"]]; name == "" {
		t.Errorf("the household a title came from is not named: %v", doc.PeerNames)
	}
	// B's page says so on the record.
	ctx, ce := browser(t)
	must(t, ctx, "open the record", ce, chromedp.Navigate("http://"+b.APIAddr()+"/?cid="+fileCID))
	must(t, ctx, "the record names what peers filled in", ce, chromedp.Poll[bool](fmt.Sprintf(
		`(() => { const l = document.getElementById("record-learned"); return !l.hidden && l.textContent.includes("title") && l.textContent.includes("IMDb ID") && l.textContent.includes(%q); })()`,
		doc.PeerNames[doc.ShownFrom["titles/eng"]]), chromedp.WithPollingTimeout(20*time.Second)))
	must(t, ctx, "the poster A's record names, fetched from a household that has it", ce, chromedp.Poll[bool](
		`(() => { const i = document.querySelector("#poster img"); return !!i && i.complete && i.naturalWidth > 0; })()`, chromedp.WithPollingTimeout(30*time.Second)))
	if errs := ce(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if got := doc.Meta["fromName"].Str; !strings.Contains(got, "titles/eng") {
		t.Errorf("fromName %q: B's title from its name is not marked a guess", got)
	}

	// B's edit wins over what peers say, and B provides the words of its
	// own fields, never of theirs.
	resp, body := send(t, b, "PATCH", "/api/meta/"+fileCID, "application/json", []byte(`{"genre/0":"Zanzibarish"}`))
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH: %s %s", resp.Status, body)
	}
	waiting.Until(t, "B providing its own genre's word", func() string {
		ps, err := a.FindProviders(waiting.Context(t), protocol.SearchTokenKey("zanzibarish").String(), 0)
		if err != nil || !slices.Contains(ps, b.PeerID()) {
			return fmt.Sprintf("%v %v", ps, err)
		}
		return ""
	})
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, word := range []string{"lighthouse", "tt0123456"} {
		ps, err := a.FindProviders(fctx, protocol.SearchTokenKey(word).String(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ps, b.PeerID()) {
			t.Errorf("B provides %q, a word of its peers' fields: %v", word, ps)
		}
	}

	// B's own NFO, once written, wins over A's title.
	writeOld(t, filepath.Join(libB, "quietharb.nfo"), []byte(`<movie><title>Our Harbour</title></movie>`))
	waiting.Until(t, "B's own NFO title shown", func() string {
		if msg := metaOf(t, b, fileCID, &doc); msg != "" {
			return msg
		}
		if doc.Meta["titles"].Object["eng"].Str != "Our Harbour" || doc.ShownFrom["titles/eng"] != "own" || doc.ShownFrom["genre"] != "edit" ||
			doc.Meta["plot"].Object["eng"].Str != "Keepers of a light." {
			return fmt.Sprintf("%v from %v", doc.Meta, doc.ShownFrom)
		}
		return ""
	})
	if t.Failed() {
		t.Logf("B's log:\n%s", logs.String())
	}
}

// metaOf reads n's document of c into doc; what went wrong, "" when
// nothing did (a busy machine's Redis may answer a request 503).
func metaOf(t *testing.T, n *node.Node, c string, doc *api.Document) string {
	resp, body := do(t, n, "GET", "/api/meta/"+c, nil)
	if resp.StatusCode != 200 {
		return resp.Status + " " + string(body)
	}
	*doc = api.Document{}
	if err := json.Unmarshal(body, doc); err != nil {
		t.Fatal(err)
	}
	return ""
}
