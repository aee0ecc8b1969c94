package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// stremioLibrary writes a household's library of real clips: Heat (an
// NFO with its IMDb ID, plot, genre and year, a poster and a fanart),
// Alien (nothing but its name, a Matroska a browser does not play),
// Lighthouse Keepers (a tvshow.nfo with its IMDb ID, two seasons, one
// episode NFO) and Quiet Harbour (a show with no NFO). It returns the
// paths by name.
func stremioLibrary(t *testing.T) (string, map[string]string) {
	t.Helper()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	film := filepath.Join(lib, "Movies", "Heat (1995)")
	show := filepath.Join(lib, "Shows", "Lighthouse Keepers")
	p := map[string]string{
		"heat":   filepath.Join(film, "Heat.1995.webm"),
		"alien":  filepath.Join(lib, "Movies", "Alien.1979.mkv"),
		"s1e1":   filepath.Join(show, "Season 01", "Lighthouse.Keepers.S01E01.The.Lamp.webm"),
		"s1e2":   filepath.Join(show, "Season 01", "Lighthouse.Keepers.S01E02.The.Storm.webm"),
		"s2e1":   filepath.Join(show, "Season 02", "Lighthouse.Keepers.S02E01.The.Return.webm"),
		"harbor": filepath.Join(lib, "Shows", "Quiet Harbour", "Quiet.Harbour.S01E01.webm"),
	}
	seconds := 2
	for _, k := range []string{"heat", "alien", "s1e1", "s1e2", "s2e1", "harbor"} {
		writeClip(t, p[k], seconds) // of different lengths: different files
		seconds++
	}
	writeOld(t, filepath.Join(film, "Heat.1995.nfo"), []byte(`<movie><title>Heat</title><year>1995</year><plot>A group of professional bank robbers.</plot><genre>Crime</genre><uniqueid type="imdb">tt0113277</uniqueid></movie>`))
	writePoster(t, filepath.Join(film, "poster.png"), 60, 90)
	writePoster(t, filepath.Join(film, "fanart.png"), 160, 90)
	writeOld(t, filepath.Join(show, "tvshow.nfo"), []byte(`<tvshow><title>Lighthouse Keepers</title><plot>Keepers of a light.</plot><year>2020</year><genre>Documentary</genre><uniqueid type="imdb">tt4000123</uniqueid></tvshow>`))
	writePoster(t, filepath.Join(show, "poster.png"), 40, 60)
	writeOld(t, filepath.Join(show, "Season 01", "Lighthouse.Keepers.S01E02.The.Storm.nfo"), []byte(`<episodedetails><title>The Storm</title><plot>A storm comes.</plot></episodedetails>`))
	return lib, p
}

// addonGet fetches an add-on URL (absolute, or a path of n) and decodes
// its JSON into v, checking the status and the CORS header every answer
// of the add-on carries.
func addonGet(t *testing.T, n *node.Node, u string, code int, v any) {
	t.Helper()
	if strings.HasPrefix(u, "/") {
		u = "http://" + n.APIAddr() + u
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		t.Fatalf("GET %s: %s %s, want %d", u, resp.Status, body, code)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("GET %s: Access-Control-Allow-Origin %q, want *", u, got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", u, ct)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, body)
	}
	if code != 200 {
		if m, ok := v.(*map[string]any); ok {
			if e, _ := (*m)["error"].(string); e == "" {
				t.Errorf("GET %s: %d without an error message: %s", u, code, body)
			}
		}
	}
}

// kinds checks that obj has each required field with its JSON kind
// (string, number, bool, array, object) and that each optional one, when
// present, has its kind.
func kinds(t *testing.T, what string, obj map[string]any, required, optional map[string]string) {
	t.Helper()
	kindOf := func(v any) string {
		switch v.(type) {
		case string:
			return "string"
		case float64:
			return "number"
		case bool:
			return "bool"
		case []any:
			return "array"
		case map[string]any:
			return "object"
		}
		return "null"
	}
	for f, k := range required {
		v, ok := obj[f]
		if !ok {
			t.Errorf("%s: no %s: %v", what, f, obj)
			continue
		}
		if kindOf(v) != k {
			t.Errorf("%s: %s is %s %v, want a %s", what, f, kindOf(v), v, k)
		}
		if s, ok := v.(string); ok && s == "" {
			t.Errorf("%s: %s is empty", what, f)
		}
	}
	for f, k := range optional {
		if v, ok := obj[f]; ok && kindOf(v) != k {
			t.Errorf("%s: %s is %s %v, want a %s", what, f, kindOf(v), v, k)
		}
	}
}

var (
	previewRequired = map[string]string{"id": "string", "type": "string", "name": "string"}
	previewOptional = map[string]string{"poster": "string", "posterShape": "string", "releaseInfo": "string", "description": "string"}
	metaOptional    = map[string]string{"poster": "string", "posterShape": "string", "background": "string", "description": "string",
		"releaseInfo": "string", "year": "number", "imdb_id": "string", "genres": "array", "videos": "array", "released": "string",
		"runtime": "string", "behaviorHints": "object"}
	videoRequired  = map[string]string{"id": "string", "title": "string", "released": "string", "season": "number", "episode": "number"}
	streamRequired = map[string]string{"url": "string", "name": "string", "description": "string", "behaviorHints": "object"}
)

type previews struct {
	Metas []map[string]any `json:"metas"`
}

// names are the names of a catalog's items, in order.
func (p previews) names() []string {
	out := []string{}
	for _, m := range p.Metas {
		out = append(out, fmt.Sprint(m["name"]))
	}
	return out
}

// TestStremio_Addon: the add-on of a loopback node, every resource of
// the protocol: the manifest, the catalogs (paged by skip, searched),
// a film's and a show's meta (the show's episodes in order), and
// streams whose URLs serve the file's bytes and play (ffprobe reads
// their video stream); posters that load; precise errors.
func TestStremio_Addon(t *testing.T) {
	t.Parallel()
	lib, p := stremioLibrary(t)
	n := startNodeWith(t, lib, func(cfg *node.Config) { cfg.Name = "Harbour House" })
	waitLibrary(t, n, "/stremio")
	base := "http://" + n.APIAddr() + "/stremio"
	alien := canonicalOf(t, p["alien"])

	var link map[string]any
	getJSON(t, n, "/api/stremio", &link)
	if link["manifest"] != base+"/manifest.json" || link["install"] != "stremio://"+n.APIAddr()+"/stremio/manifest.json" {
		t.Errorf("the add-on's URL on loopback: %v", link)
	}
	var man map[string]any
	addonGet(t, n, "/stremio/manifest.json", 200, &man)
	kinds(t, "manifest", man, map[string]string{"id": "string", "version": "string", "name": "string", "description": "string",
		"resources": "array", "types": "array", "catalogs": "array", "idPrefixes": "array", "behaviorHints": "object"}, nil)
	if id := fmt.Sprint(man["id"]); !regexp.MustCompile(`^org\.metamesh\.[A-Za-z0-9]{8}$`).MatchString(id) || !strings.HasSuffix(n.PeerID(), strings.TrimPrefix(id, "org.metamesh.")) {
		t.Errorf("manifest id %q, want org.metamesh.<the end of %s>", id, n.PeerID())
	}
	if v := fmt.Sprint(man["version"]); !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(v) {
		t.Errorf("manifest version %q is not semver", v)
	}
	for f, want := range map[string]string{"name": "Harbour House", "resources": "[catalog meta stream]", "types": "[movie series]", "idPrefixes": "[tt mm:]"} {
		if got := fmt.Sprint(man[f]); got != want {
			t.Errorf("manifest %s %s, want %s", f, got, want)
		}
	}
	cats, _ := man["catalogs"].([]any)
	if len(cats) != 2 {
		t.Fatalf("catalogs %v", cats)
	}
	for i, want := range [][2]string{{"movie", "metamesh-movies"}, {"series", "metamesh-series"}} {
		c, _ := cats[i].(map[string]any)
		kinds(t, "catalog", c, map[string]string{"type": "string", "id": "string", "name": "string", "extra": "array"}, nil)
		if c["type"] != want[0] || c["id"] != want[1] {
			t.Errorf("catalog %d is %v %v, want %v", i, c["type"], c["id"], want)
		}
		var extra []string
		for _, e := range c["extra"].([]any) {
			extra = append(extra, fmt.Sprint(e.(map[string]any)["name"]))
		}
		if fmt.Sprint(extra) != "[search skip]" {
			t.Errorf("catalog %s extra %v", want[1], extra)
		}
	}

	// The catalogs, whole and by skip.
	var films, shows previews
	addonGet(t, n, "/stremio/catalog/movie/metamesh-movies.json", 200, &films)
	addonGet(t, n, "/stremio/catalog/series/metamesh-series.json", 200, &shows)
	for _, m := range append(append([]map[string]any{}, films.Metas...), shows.Metas...) {
		kinds(t, "catalog item", m, previewRequired, previewOptional)
	}
	if got := fmt.Sprint(films.names()); got != "[Alien Heat]" {
		t.Fatalf("films %s", got)
	}
	if got := fmt.Sprint(shows.names()); got != "[Lighthouse Keepers Quiet Harbour]" {
		t.Fatalf("shows %s", got)
	}
	want := []map[string]any{
		{"id": "mm:" + alien, "type": "movie", "posterShape": "poster", "releaseInfo": "1979"},
		{"id": "tt0113277", "type": "movie", "releaseInfo": "1995"},
		{"id": "tt4000123", "type": "series", "releaseInfo": "2020"},
		{"id": "mm:show:quiet-harbour", "type": "series"},
	}
	for i, m := range append(append([]map[string]any{}, films.Metas...), shows.Metas...) {
		for f, v := range want[i] {
			if m[f] != v {
				t.Errorf("%v: %s %v, want %v", m["name"], f, m[f], v)
			}
		}
	}
	for _, m := range []map[string]any{films.Metas[1], shows.Metas[0]} {
		poster := fmt.Sprint(m["poster"])
		if !strings.HasPrefix(poster, base+"/thumb/") {
			t.Errorf("%v: poster %q, want the node's thumbnail", m["name"], poster)
		}
		if ct, _ := fetch(t, poster); ct != "image/jpeg" {
			t.Errorf("%v: its poster is %s", m["name"], ct)
		}
	}
	var page previews
	addonGet(t, n, "/stremio/catalog/movie/metamesh-movies/skip=1.json", 200, &page)
	if got := fmt.Sprint(page.names()); got != "[Heat]" {
		t.Errorf("films from skip=1: %s", got)
	}
	addonGet(t, n, "/stremio/catalog/series/metamesh-series/skip=2.json", 200, &page)
	if len(page.Metas) != 0 {
		t.Errorf("shows from skip=2: %s", page.names())
	}

	// Search, as Stremio writes it (URL-encoded, with skip).
	for _, tt := range []struct{ path, want string }{
		{"/stremio/catalog/movie/metamesh-movies/search=heat.json", "[Heat]"},
		{"/stremio/catalog/movie/metamesh-movies/search=" + url.QueryEscape("heat crime") + ".json", "[Heat]"},
		{"/stremio/catalog/movie/metamesh-movies/search=tt0113277.json", "[Heat]"},
		{"/stremio/catalog/movie/metamesh-movies/search=lighthouse.json", "[]"},
		{"/stremio/catalog/series/metamesh-series/search=lighthouse%20keepers.json", "[Lighthouse Keepers]"},
		{"/stremio/catalog/series/metamesh-series/search=storm&skip=0.json", "[Lighthouse Keepers]"},
		{"/stremio/catalog/series/metamesh-series/search=storm&skip=1.json", "[]"},
		{"/stremio/catalog/series/metamesh-series/search=harbour.json", "[Quiet Harbour]"},
		{"/stremio/catalog/movie/metamesh-movies/search=%21%21.json", "[]"},
	} {
		addonGet(t, n, tt.path, 200, &page)
		if got := fmt.Sprint(page.names()); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.path, got, tt.want)
		}
	}

	// A film's meta, by its IMDb ID and by the node's own ID (as
	// Stremio escapes it).
	var heat struct{ Meta map[string]any }
	addonGet(t, n, "/stremio/meta/movie/tt0113277.json", 200, &heat)
	kinds(t, "Heat", heat.Meta, map[string]string{"id": "string", "type": "string", "name": "string", "poster": "string",
		"background": "string", "description": "string", "releaseInfo": "string", "imdb_id": "string", "genres": "array", "released": "string"}, metaOptional)
	for f, v := range map[string]string{"id": "tt0113277", "type": "movie", "name": "Heat", "description": "A group of professional bank robbers.",
		"releaseInfo": "1995", "year": "1995", "imdb_id": "tt0113277", "genres": "[Crime]", "released": "1995-01-01T00:00:00.000Z",
		"behaviorHints": "map[defaultVideoId:tt0113277]"} {
		if got := fmt.Sprint(heat.Meta[f]); got != v {
			t.Errorf("Heat's %s %s, want %s", f, got, v)
		}
	}
	if ct, _ := fetch(t, fmt.Sprint(heat.Meta["background"])); ct != "image/jpeg" {
		t.Errorf("Heat's background %v is %s", heat.Meta["background"], ct)
	}
	var al struct{ Meta map[string]any }
	addonGet(t, n, "/stremio/meta/movie/"+url.PathEscape("mm:"+alien)+".json", 200, &al)
	addonGet(t, n, "/stremio/meta/movie/mm%3A"+alien+".json", 200, &al)
	kinds(t, "Alien", al.Meta, previewRequired, metaOptional)
	if al.Meta["id"] != "mm:"+alien || al.Meta["name"] != "Alien" {
		t.Errorf("Alien's meta %v", al.Meta)
	}

	// A show's meta: its episodes, in order, each with its ID.
	var lk struct {
		Meta struct {
			ID, Type, Name, Description string
			Videos                      []map[string]any
		}
	}
	addonGet(t, n, "/stremio/meta/series/tt4000123.json", 200, &lk)
	if lk.Meta.ID != "tt4000123" || lk.Meta.Type != "series" || lk.Meta.Name != "Lighthouse Keepers" || lk.Meta.Description == "" {
		t.Errorf("the show's meta %+v", lk.Meta)
	}
	var order []string
	for _, v := range lk.Meta.Videos {
		kinds(t, "video", v, videoRequired, map[string]string{"overview": "string", "thumbnail": "string"})
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(v["released"])); err != nil {
			t.Errorf("video %v: released %v: %v", v["id"], v["released"], err)
		}
		order = append(order, fmt.Sprintf("%v %v/%v %v", v["id"], v["season"], v["episode"], v["title"]))
	}
	if got, want := strings.Join(order, ", "), "tt4000123:1:1 1/1 The Lamp, tt4000123:1:2 1/2 The Storm, tt4000123:2:1 2/1 The Return"; got != want {
		t.Errorf("videos %s, want %s", got, want)
	}
	if lk.Meta.Videos[1]["overview"] != "A storm comes." {
		t.Errorf("S01E02's overview %v", lk.Meta.Videos[1]["overview"])
	}
	var qh struct{ Meta map[string]any }
	addonGet(t, n, "/stremio/meta/series/mm%3Ashow%3Aquiet-harbour.json", 200, &qh)
	if vs, _ := qh.Meta["videos"].([]any); len(vs) != 1 || vs[0].(map[string]any)["id"] != "mm:show:quiet-harbour:1:1" {
		t.Errorf("Quiet Harbour's videos %v", qh.Meta["videos"])
	}

	// Streams: the file's bytes, and a player reads them.
	for _, tt := range []struct {
		path, file  string
		notWebReady bool
	}{
		{"/stremio/stream/movie/tt0113277.json", p["heat"], false},
		{"/stremio/stream/movie/mm%3A" + alien + ".json", p["alien"], true},
		{"/stremio/stream/series/tt4000123%3A2%3A1.json", p["s2e1"], false},
		{"/stremio/stream/series/mm:show:quiet-harbour:1:1.json", p["harbor"], false},
	} {
		var sa struct{ Streams []map[string]any }
		addonGet(t, n, tt.path, 200, &sa)
		want := 1
		if tt.notWebReady {
			want = 2 // and the node's conversion of it, for Stremio's web app
		}
		if len(sa.Streams) != want {
			t.Fatalf("%s: %d streams, want %d: %v", tt.path, len(sa.Streams), want, sa.Streams)
		}
		if tt.notWebReady {
			conv := sa.Streams[1]
			kinds(t, tt.path+" converted", conv, streamRequired, map[string]string{"title": "string"})
			u := fmt.Sprint(conv["url"])
			if !strings.HasPrefix(u, base+"/converted/") {
				t.Errorf("%s: converted url %s", tt.path, u)
			}
			probe(t, u)
		}
		s := sa.Streams[0]
		kinds(t, tt.path, s, streamRequired, map[string]string{"title": "string"})
		hints, _ := s["behaviorHints"].(map[string]any)
		kinds(t, tt.path+" hints", hints, map[string]string{"bingeGroup": "string"}, map[string]string{"notWebReady": "bool", "filename": "string", "videoSize": "number"})
		if got := hints["notWebReady"] == true; got != tt.notWebReady {
			t.Errorf("%s: notWebReady %v, want %v", tt.path, hints["notWebReady"], tt.notWebReady)
		}
		u := fmt.Sprint(s["url"])
		if !strings.HasPrefix(u, base+"/file/") {
			t.Errorf("%s: url %s", tt.path, u)
		}
		if _, body := fetch(t, u); !bytes.Equal(body, mustRead(t, tt.file)) {
			t.Errorf("%s: %s serves %d bytes, not the file's", tt.path, u, len(body))
		}
		probe(t, u)
	}
	var none struct{ Streams []any }
	addonGet(t, n, "/stremio/stream/movie/tt9999999.json", 200, &none)
	addonGet(t, n, "/stremio/stream/series/tt4000123:3:1.json", 200, &none)
	if none.Streams == nil || len(none.Streams) != 0 {
		t.Errorf("streams of what the household does not hold: %v", none.Streams)
	}

	// Precise errors.
	for _, tt := range []struct {
		path string
		code int
	}{
		{"/stremio/meta/movie/tt12.json", 400},
		{"/stremio/meta/movie/nm0000001.json", 400},
		{"/stremio/meta/movie/tt9999999.json", 404},
		{"/stremio/meta/series/tt4000123:1:1.json", 400},
		{"/stremio/meta/movie/mm%3Ashow%3Aquiet-harbour.json", 400},
		{"/stremio/stream/series/tt4000123.json", 400},
		{"/stremio/catalog/tv/metamesh-movies.json", 404},
		{"/stremio/catalog/movie/metamesh-series.json", 404},
		{"/stremio/catalog/movie/metamesh-movies/genre=Drama.json", 400},
		{"/stremio/catalog/movie/metamesh-movies/skip=-3.json", 400},
		{"/stremio/meta/movie/tt0113277", 404},
		{"/stremio/nothing.json", 404},
		{"/stremio/tok/manifest.json", 404},
	} {
		var e map[string]any
		addonGet(t, n, tt.path, tt.code, &e)
	}
	if resp, body := do(t, n, "GET", "/stremio/manifest.json", map[string]string{"Host": "evil.example"}); resp.StatusCode != 403 {
		t.Errorf("a rebinding Host: %s %s", resp.Status, body)
	}
	if resp, body := do(t, n, "GET", "/stremio/catalog/movie/metamesh-movies.json", map[string]string{"X-Forwarded-Proto": "https", "Host": "media.example"}); resp.StatusCode != 403 {
		t.Errorf("a Host that is not the node's, on loopback: %s %s", resp.Status, body)
	}
	if resp, body := do(t, n, "GET", "/stremio/catalog/movie/metamesh-movies.json", map[string]string{"X-Forwarded-Proto": "https", "Host": "localhost:8443"}); !bytes.Contains(body, []byte(`"poster": "https://localhost:8443/stremio/thumb/`)) {
		t.Errorf("behind an HTTPS proxy: %s %s", resp.Status, body)
	}
	if resp, _ := do(t, n, "OPTIONS", "/stremio/manifest.json", nil); resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: %s %v", resp.Status, resp.Header)
	}
}

// TestStremio_Token: off loopback GET /api/stremio gives a client with
// the API's token the add-on's URL, whose every path carries the
// add-on's own token (not the API's, which Stremio's account would
// keep): without it or with another 401, with it the add-on and the
// links it gives (posters, streams) work, and it opens nothing else.
func TestStremio_Token(t *testing.T) {
	t.Parallel()
	lib, p := stremioLibrary(t)
	tokFile := filepath.Join(t.TempDir(), "tok")
	n := startNodeWith(t, lib, func(cfg *node.Config) { cfg.APIAddr = "0.0.0.0:0"; cfg.APITokenFile = tokFile })
	apiTok := strings.TrimSpace(string(mustRead(t, tokFile)))
	if resp, body := do(t, n, "GET", "/api/stremio", nil); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("the add-on's URL without the API's token: %s %s", resp.Status, body)
	}
	if resp, body := do(t, n, "GET", "/api/stremio", map[string]string{"Authorization": "Bearer " + apiTok, "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != 403 {
		t.Errorf("the add-on's URL to a page of another site: %s %s", resp.Status, body)
	}
	resp, body := do(t, n, "GET", "/api/stremio", map[string]string{"Authorization": "Bearer " + apiTok, "Host": "nas.lan:4680"})
	var link struct{ Manifest, Install string }
	if err := json.Unmarshal(body, &link); resp.StatusCode != 200 || err != nil {
		t.Fatalf("the add-on's URL: %s %s", resp.Status, body)
	}
	m := regexp.MustCompile(`^http://nas\.lan:4680/stremio/([0-9a-f]{32})/manifest\.json$`).FindStringSubmatch(link.Manifest)
	if m == nil || link.Install != "stremio://"+strings.TrimPrefix(link.Manifest, "http://") {
		t.Fatalf("the add-on's URL %+v", link)
	}
	tok := m[1]
	if strings.Contains(link.Manifest, apiTok) || strings.Contains(apiTok, tok) {
		t.Errorf("the add-on's URL %s gives the API's token %s away", link.Manifest, apiTok)
	}
	waitLibrary(t, n, "/stremio/"+tok)
	heat := canonicalOf(t, p["heat"])
	for _, path := range []string{"/stremio/manifest.json", "/stremio/catalog/movie/metamesh-movies.json", "/stremio/stream/movie/tt0113277.json",
		"/stremio/file/" + heat, "/stremio/" + strings.Repeat("0", len(tok)) + "/manifest.json", "/stremio/" + tok[:10] + "/manifest.json",
		"/stremio/" + strings.Repeat("0", len(tok)) + "/file/" + heat, "/stremio/" + apiTok + "/manifest.json"} {
		var e map[string]any
		addonGet(t, n, path, 401, &e)
	}
	var man map[string]any
	addonGet(t, n, "/stremio/"+tok+"/manifest.json", 200, &man)
	if man["id"] == nil {
		t.Errorf("manifest %v", man)
	}
	var films previews
	addonGet(t, n, "/stremio/"+tok+"/catalog/movie/metamesh-movies.json", 200, &films)
	if got := fmt.Sprint(films.names()); got != "[Alien Heat]" {
		t.Fatalf("films %s", got)
	}
	base := "http://" + n.APIAddr() + "/stremio/" + tok
	poster := fmt.Sprint(films.Metas[1]["poster"])
	if !strings.HasPrefix(poster, base+"/thumb/") {
		t.Errorf("poster %s, want it under %s", poster, base)
	}
	if ct, _ := fetch(t, poster); ct != "image/jpeg" {
		t.Errorf("the poster is %s", ct)
	}
	var sa struct{ Streams []map[string]any }
	addonGet(t, n, "/stremio/"+tok+"/stream/movie/tt0113277.json", 200, &sa)
	if len(sa.Streams) != 1 {
		t.Fatalf("streams %v", sa.Streams)
	}
	u := fmt.Sprint(sa.Streams[0]["url"])
	if u != base+"/file/"+heat {
		t.Errorf("stream url %s, want %s", u, base+"/file/"+heat)
	}
	if _, body := fetch(t, u); !bytes.Equal(body, mustRead(t, p["heat"])) {
		t.Errorf("%s serves %d bytes, not the file's", u, len(body))
	}
	probe(t, u)
	var e map[string]any
	addonGet(t, n, "/stremio/"+tok+"/file/"+canonicalOf(t, filepath.Join(lib, "Movies", "Heat (1995)", "Heat.1995.nfo")), 404, &e)
	if resp, _ := do(t, n, "GET", "/api/file/"+heat, map[string]string{"Authorization": "Bearer " + tok}); resp.StatusCode != 401 {
		t.Errorf("/api/file with the add-on's token: %s", resp.Status)
	}
	if resp, _ := do(t, n, "GET", "/api/file/"+heat, nil); resp.StatusCode != 401 {
		t.Errorf("/api/file without the token: %s", resp.Status)
	}
}

// waitLibrary waits until the add-on under prefix lists the sample's
// films and shows with their posters, the show's IMDb ID known.
func waitLibrary(t *testing.T, n *node.Node, prefix string) {
	t.Helper()
	waiting.For(t, "the films and shows listed with their posters", func() bool {
		var films, shows previews
		addonGet(t, n, prefix+"/catalog/movie/metamesh-movies.json", 200, &films)
		addonGet(t, n, prefix+"/catalog/series/metamesh-series.json", 200, &shows)
		if len(films.Metas) != 2 || films.Metas[1]["poster"] == nil || films.Metas[1]["id"] != "tt0113277" ||
			len(shows.Metas) != 2 || shows.Metas[0]["poster"] == nil || shows.Metas[0]["id"] != "tt4000123" {
			return false
		}
		var show struct{ Meta struct{ Videos []any } }
		addonGet(t, n, prefix+"/meta/series/tt4000123.json", 200, &show)
		return len(show.Meta.Videos) == 3
	})
}

// fetch GETs u and returns its Content-Type and body, failing on a
// status other than 200.
func fetch(t *testing.T, u string) (string, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", u, resp.Status, body)
	}
	return resp.Header.Get("Content-Type"), body
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probe has ffprobe read a stream URL as a player would: it exits 0 and
// finds a video stream.
func probe(t *testing.T, u string) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_streams", u).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v: %s", u, err, out)
	}
	if !strings.Contains(string(out), "codec_type=video") {
		t.Errorf("ffprobe %s finds no video stream: %s", u, out)
	}
}
