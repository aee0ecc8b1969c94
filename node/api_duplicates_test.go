package node_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// The library of the duplicates' tests: one file under two paths, one
// film in two encodes (under two ways of naming it), one episode in two
// encodes, and an unrelated film; the sizes make the order of the
// groups (the most wasted bytes first).
var duplicatesLibrary = []struct {
	path string
	size int
	same bool // the same bytes as the last file so marked
}{
	{"Movies/Lone.Lighthouse.2011.mkv", 10000, true},
	{"Backup/Lone Lighthouse (2011).mkv", 10000, true},
	{"Movies/Quiet.Harbour.2015.1080p.x264.mkv", 8000, false},
	{"Movies/Quiet Harbour (2015)/Quiet Harbour.720p.mkv", 6000, false},
	{"TV/Grey Coast/Grey.Coast.S01E02.1080p.x265.mkv", 5000, false},
	{"TV/Grey Coast/Season 1/Grey.Coast.S01E02.480p.XviD.avi", 3000, false},
	{"Movies/Zulu.1964.mkv", 4000, false},
}

// writeDuplicatesLibrary writes duplicatesLibrary under lib.
func writeDuplicatesLibrary(t *testing.T, lib string) {
	t.Helper()
	var same []byte
	for _, f := range duplicatesLibrary {
		data := make([]byte, f.size)
		rand.Read(data)
		if f.same {
			if same == nil {
				same = data
			}
			data = same
		}
		writeOld(t, filepath.Join(lib, f.path), data)
	}
}

// duplicates answers GET /api/duplicates?query on n.
func duplicates(t *testing.T, n *node.Node, query string) api.DuplicatesPage {
	t.Helper()
	var p api.DuplicatesPage
	getJSON(t, n, "/api/duplicates?"+query, &p)
	return p
}

// groupLines are a page's groups in a few words: the title, the count
// and wasted bytes, and each copy's path relative to lib and size.
func groupLines(lib string, p api.DuplicatesPage) []string {
	out := []string{}
	for _, g := range p.Groups {
		s := fmt.Sprintf("%s (%d copies, %d wasted):", g.Title, g.Count, g.Wasted)
		for _, c := range g.Copies {
			rel, _ := filepath.Rel(lib, c.Path)
			s += fmt.Sprintf(" %s %d", rel, c.Size)
		}
		out = append(out, s)
	}
	return out
}

// TestAPI_Duplicates: GET /api/duplicates on a real node groups the
// household's files by content (one file, its paths) and by title (one
// film or episode, its files, their encodings side by side), the most
// wasted bytes first, paged; a peer's copy of a film is not listed; bad
// parameters are 400s.
func TestAPI_Duplicates(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	writeDuplicatesLibrary(t, lib)
	n := startNodeWith(t, lib, nil)
	waiting.For(t, "the catalog's load", func() bool {
		p := duplicates(t, n, "by=title")
		return p.Loaded && p.Total == 2 && duplicates(t, n, "by=content").Total == 1
	})

	lone := canonicalOf(t, filepath.Join(lib, "Movies/Lone.Lighthouse.2011.mkv"))
	content := duplicates(t, n, "by=content")
	// Which path is the primary is the scan's: the paths in any order.
	slices.SortFunc(content.Groups[0].Copies, func(a, b api.DuplicateCopy) int { return strings.Compare(a.Path, b.Path) })
	if got, want := groupLines(lib, content), []string{
		"Lone Lighthouse (2 copies, 10000 wasted): Backup/Lone Lighthouse (2011).mkv 10000 Movies/Lone.Lighthouse.2011.mkv 10000",
	}; !slices.Equal(got, want) || content.Groups[0].Key != lone || content.Groups[0].Copies[1].CID != lone {
		t.Errorf("by content: %q (key %s), want %q (key %s)", got, content.Groups[0].Key, want, lone)
	}
	if p := duplicates(t, n, ""); p.By != "content" || p.Total != 1 || p.Groups[0].Key != lone {
		t.Errorf("no by: %+v, want the groups by content", p)
	}

	film := []string{"Quiet Harbour (2 copies, 6000 wasted): Movies/Quiet.Harbour.2015.1080p.x264.mkv 8000 Movies/Quiet Harbour (2015)/Quiet Harbour.720p.mkv 6000"}
	episode := []string{"Grey Coast (2 copies, 3000 wasted): TV/Grey Coast/Grey.Coast.S01E02.1080p.x265.mkv 5000 TV/Grey Coast/Season 1/Grey.Coast.S01E02.480p.XviD.avi 3000"}
	for _, tt := range []struct {
		query string
		want  []string
		pages int
	}{
		{"by=title", append(slices.Clone(film), episode...), 1},
		{"by=title&limit=1", film, 2},
		{"by=title&limit=1&page=2", episode, 2},
		{"by=title&limit=1&page=3", []string{}, 2},
	} {
		t.Run(tt.query, func(t *testing.T) {
			p := duplicates(t, n, tt.query)
			if got := groupLines(lib, p); !slices.Equal(got, tt.want) || p.Pages != tt.pages || p.Total != 2 || p.Wasted != 9000 {
				t.Errorf("%q (%d pages, %d groups, %d wasted), want %q (%d pages, 2 groups, 9000 wasted)", got, p.Pages, p.Total, p.Wasted, tt.want, tt.pages)
			}
		})
	}
	g := duplicates(t, n, "by=title").Groups
	if a, b := g[0].Copies[0], g[0].Copies[1]; a.Resolution != "1080p" || a.VideoCodec != "H.264" || b.Resolution != "720p" ||
		a.CID != canonicalOf(t, filepath.Join(lib, "Movies/Quiet.Harbour.2015.1080p.x264.mkv")) || g[0].Year != 2015 {
		t.Errorf("the film's copies: %+v and %+v (year %d), want 1080p H.264 and 720p of 2015", a, b, g[0].Year)
	}
	if e := g[1]; e.Season == nil || *e.Season != 1 || e.Episode == nil || *e.Episode != 2 || e.Copies[0].VideoCodec != "H.265" || e.Copies[1].VideoCodec != "XviD" {
		t.Errorf("the episode's group: %+v, want S01E02 in H.265 and XviD", e)
	}

	for query, says := range map[string]string{
		"by=size":     `by "size": want content or title`,
		"page=0":      `page "0"`,
		"limit=500":   `limit "500"`,
		"by=title&x=": `unknown parameter "x"`,
	} {
		if resp, body := do(t, n, "GET", "/api/duplicates?"+query, nil); resp.StatusCode != 400 || !jsonErrorSays(body, says) {
			t.Errorf("%s: %s %s, want 400 saying %q", query, resp.Status, body, says)
		}
	}

	// A peer's copy of the film, of another size: the household does
	// not hold it, so it is no copy of the household's.
	far := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	if _, err := n.Store().MergeRecord(context.Background(), farPeer, []string{far},
		map[string]string{"titles/eng": "Quiet Harbour", "movieYear": "2015", "fileType": "video", "sizeByte": "99999"}); err != nil {
		t.Fatal(err)
	}
	waiting.For(t, "the peer's film in the catalog", func() bool { return library(t, n, "view=peers").Total == 1 })
	if got := groupLines(lib, duplicates(t, n, "by=title")); !slices.Equal(got, append(slices.Clone(film), episode...)) {
		t.Errorf("by title with a peer's copy: %q, want the household's files only", got)
	}
}

// TestAPI_DuplicatesAccess: off loopback, /api/duplicates (which names
// the household's paths) needs the token or a browser an invite let in;
// a client with neither is refused.
func TestAPI_DuplicatesAccess(t *testing.T) {
	t.Parallel()
	n, tok, _ := startTokenNode(t)
	auth := map[string]string{"Authorization": "Bearer " + tok}
	owner := newDevice(t, n, "192.168.1.2:40000")
	phone := newDevice(t, n, "192.168.1.20:51000")
	stranger := newDevice(t, n, "192.168.1.30:52000")

	rec := owner.send("POST", "/api/invites", auth)
	var inv api.InviteAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &inv); rec.Code != http.StatusCreated || err != nil {
		t.Fatalf("POST /api/invites: %d %s", rec.Code, rec.Body)
	}
	if rec := phone.send("GET", inv.Path, map[string]string{"Accept": "text/html"}); rec.Code != http.StatusSeeOther || len(phone.cookies) != 1 {
		t.Fatalf("open the invite's link: %d, cookies %v", rec.Code, phone.cookies)
	}
	for _, tt := range []struct {
		who  string
		d    *device
		hdr  map[string]string
		code int
	}{
		{"the token", owner, auth, http.StatusOK},
		{"an invite's cookie", phone, map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"neither", stranger, nil, http.StatusUnauthorized},
		{"a wrong token", stranger, map[string]string{"Authorization": "Bearer not-" + tok}, http.StatusUnauthorized},
	} {
		for _, by := range []string{"content", "title"} {
			if rec := tt.d.send("GET", "/api/duplicates?by="+by, tt.hdr); rec.Code != tt.code {
				t.Errorf("%s, by %s: %d %s, want %d", tt.who, by, rec.Code, rec.Body, tt.code)
			} else if tt.code != http.StatusOK {
				errorOf(t, rec)
			}
		}
	}
}
