package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
)

// davLibrary writes the library the WebDAV tests serve: a film titled by
// its NFO with a subtitle and a poster (and a copy of it at another
// path), two episodes of a show, a home video, a film whose NFO title
// holds "/" and ":", and two films of the same title and year. It
// returns each video's bytes by its path in the library.
func davLibrary(t *testing.T, lib string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	video := func(rel string, size int) {
		b := make([]byte, size)
		rand.Read(b)
		files[rel] = b
		writeOld(t, filepath.Join(lib, rel), b)
	}
	video("Films/Heat.1995/Heat.1995.mkv", 300<<10)
	writeOld(t, filepath.Join(lib, "Films/Heat.1995/Heat.1995.nfo"), []byte(`<movie><title>Heat</title><originaltitle>Heat</originaltitle><year>1995</year>
<plot>A group of professional bank robbers.</plot><genre>Crime</genre><uniqueid type="imdb">tt0113277</uniqueid></movie>`))
	writeOld(t, filepath.Join(lib, "Films/Heat.1995/Heat.1995.en.srt"), []byte("1\n00:00:01,000 --> 00:00:02,000\nHello\n"))
	var poster bytes.Buffer
	if err := jpeg.Encode(&poster, image.NewRGBA(image.Rect(0, 0, 20, 30)), nil); err != nil {
		t.Fatal(err)
	}
	writeOld(t, filepath.Join(lib, "Films/Heat.1995/poster.jpg"), poster.Bytes())
	// A copy of the film's folder: the same files at other paths.
	for _, name := range []string{"Heat.1995.mkv", "Heat.1995.nfo", "Heat.1995.en.srt", "poster.jpg"} {
		b, err := os.ReadFile(filepath.Join(lib, "Films/Heat.1995", name))
		if err != nil {
			t.Fatal(err)
		}
		writeOld(t, filepath.Join(lib, "Backup/Heat.1995", name), b)
	}
	video("Series/The Wire/The.Wire.S01E01.mkv", 20<<10)
	writeOld(t, filepath.Join(lib, "Series/The Wire/The.Wire.S01E01.nfo"), []byte(`<episodedetails><title>The Target</title><showtitle>The Wire</showtitle>
<season>1</season><episode>1</episode><plot>Baltimore.</plot><aired>2002-06-02</aired></episodedetails>`))
	video("Series/The Wire/The.Wire.S01E02.mkv", 20<<10)
	video("Phone/VID_20190314_181510.mp4", 10<<10)
	video("Films/acdc/acdc.mkv", 10<<10)
	writeOld(t, filepath.Join(lib, "Films/acdc/acdc.nfo"), []byte(`<movie><title>AC/DC: Live</title><year>1992</year></movie>`))
	video("Films/One/Twin (2001).mkv", 10<<10)
	video("Films/Two/Twin (2001).mkv", 11<<10)
	return files
}

// rclone runs rclone with a remote "x:" on the WebDAV share at base
// (user and password set when pass is not ""), and returns its output.
func rclone(t *testing.T, base, pass string, args ...string) (string, error) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "RCLONE_CONFIG="+conf, "RCLONE_CONFIG_X_TYPE=webdav", "RCLONE_CONFIG_X_URL="+base, "RCLONE_CONFIG_X_VENDOR=other")
	if pass != "" {
		out, err := exec.Command("rclone", "obscure", pass).Output()
		if err != nil {
			t.Fatalf("rclone obscure: %v", err)
		}
		env = append(env, "RCLONE_CONFIG_X_USER=anyone", "RCLONE_CONFIG_X_PASS="+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(waiting.Context(t), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "rclone", append([]string{"--low-level-retries", "1", "--retries", "1"}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("rclone %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// davEntry is a PROPFIND answer's entry: its path and its properties.
type davEntry struct {
	Href   string    `xml:"href"`
	Length int64     `xml:"propstat>prop>getcontentlength"`
	Type   string    `xml:"propstat>prop>getcontenttype"`
	ETag   string    `xml:"propstat>prop>getetag"`
	Dir    *struct{} `xml:"propstat>prop>resourcetype>collection"`
}

// propfind lists the folder at p (under /dav/) with PROPFIND Depth 1.
func propfind(t *testing.T, n *node.Node, p string, hdr map[string]string) (int, []davEntry) {
	t.Helper()
	req, err := http.NewRequest("PROPFIND", "http://"+n.APIAddr()+"/dav"+(&url.URL{Path: p}).EscapedPath(), strings.NewReader(`<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Depth", "1")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusMultiStatus {
		return resp.StatusCode, nil
	}
	var ms struct {
		Responses []davEntry `xml:"response"`
	}
	if err := xml.Unmarshal(body, &ms); err != nil {
		t.Fatalf("PROPFIND %s: %v: %s", p, err, body)
	}
	for i := range ms.Responses {
		h, err := url.PathUnescape(ms.Responses[i].Href)
		if err != nil {
			t.Fatalf("href %q: %v", ms.Responses[i].Href, err)
		}
		ms.Responses[i].Href = h
	}
	return resp.StatusCode, ms.Responses
}

// TestDAV_Library: the WebDAV share lays the library out from its
// metadata, as rclone, cadaver and a plain PROPFIND see it; files read
// whole and by range match the library's bytes, a friend's film is
// under its household's folder and streams from it; names are safe and
// told apart; the .nfo files parse; writes are refused.
func TestDAV_Library(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	files := davLibrary(t, lib)
	friendLib := t.TempDir()
	arrival := make([]byte, 2<<20+777) // several blocks
	rand.Read(arrival)
	writeOld(t, filepath.Join(friendLib, "Arrival (2016).mkv"), arrival)
	friend := startNodeWith(t, friendLib, func(c *node.Config) { c.ShareFiles = true; c.Name = "The Neighbours" })
	n := startNodeWith(t, lib, nil)
	if err := connect(n, friend); err != nil {
		t.Fatal(err)
	}
	// The friend's record, learned as a search or a lookup learns it.
	var doc map[string]any
	getJSON(t, n, "/api/meta/"+canonicalOf(t, filepath.Join(friendLib, "Arrival (2016).mkv")), &doc)

	// A home video is named by its title, as the library's lists show it.
	var home struct{ Title string }
	waiting.Until(t, "the home video in the library's list", func() string {
		var page struct{ Entries []struct{ Title string } }
		getJSON(t, n, "/api/library?view=other", &page)
		if len(page.Entries) != 1 {
			return fmt.Sprintf("%+v", page)
		}
		home = page.Entries[0]
		return ""
	}, waiting.Every(100*time.Millisecond))
	base := "http://" + n.APIAddr() + "/dav/"
	want := []string{
		"From other households/",
		"From other households/The Neighbours/",
		"From other households/The Neighbours/Movies/",
		"From other households/The Neighbours/Movies/Arrival (2016)/",
		"From other households/The Neighbours/Movies/Arrival (2016)/Arrival (2016).mkv",
		"From other households/The Neighbours/Movies/Arrival (2016)/Arrival (2016).nfo",
		"Movies/",
		"Movies/AC-DC - Live (1992)/",
		"Movies/AC-DC - Live (1992)/AC-DC - Live (1992).mkv",
		"Movies/AC-DC - Live (1992)/AC-DC - Live (1992).nfo",
		"Movies/Heat (1995)/",
		"Movies/Heat (1995)/Heat (1995).eng.srt",
		"Movies/Heat (1995)/Heat (1995).mkv",
		"Movies/Heat (1995)/Heat (1995).nfo",
		"Movies/Heat (1995)/poster.jpg",
		"Movies/Twin (2001) (2)/",
		"Movies/Twin (2001) (2)/Twin (2001) (2).mkv",
		"Movies/Twin (2001) (2)/Twin (2001) (2).nfo",
		"Movies/Twin (2001)/",
		"Movies/Twin (2001)/Twin (2001).mkv",
		"Movies/Twin (2001)/Twin (2001).nfo",
		"Other videos/",
		"Other videos/" + home.Title + ".mp4",
		"Other videos/" + home.Title + ".nfo",
		"TV Shows/",
		"TV Shows/The Wire/",
		"TV Shows/The Wire/Season 01/",
		"TV Shows/The Wire/Season 01/The Wire - S01E01 - The Target.mkv",
		"TV Shows/The Wire/Season 01/The Wire - S01E01 - The Target.nfo",
		"TV Shows/The Wire/Season 01/The Wire - S01E02.mkv",
		"TV Shows/The Wire/Season 01/The Wire - S01E02.nfo",
		"TV Shows/The Wire/tvshow.nfo",
	}
	slices.Sort(want)
	var got []string
	waiting.Until(t, "rclone lsf -R of the share to hold the library", func() string {
		out, err := rclone(t, base, "", "lsf", "-R", "x:")
		if err != nil {
			return err.Error()
		}
		got = strings.Split(strings.TrimSpace(out), "\n")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return ""
	}, waiting.Every(200*time.Millisecond))

	// Whole files and a range, through rclone.
	heat := files["Films/Heat.1995/Heat.1995.mkv"]
	for path, want := range map[string][]byte{
		"Movies/Heat (1995)/Heat (1995).mkv":                                            heat,
		"TV Shows/The Wire/Season 01/The Wire - S01E02.mkv":                             files["Series/The Wire/The.Wire.S01E02.mkv"],
		"From other households/The Neighbours/Movies/Arrival (2016)/Arrival (2016).mkv": arrival,
	} {
		out, err := rclone(t, base, "", "cat", "x:"+path)
		if err != nil || !bytes.Equal([]byte(out), want) {
			t.Errorf("rclone cat %s: %d bytes, want %d: %v", path, len(out), len(want), err)
		}
	}
	out, err := rclone(t, base, "", "cat", "--offset", "100000", "--count", "50000", "x:Movies/Heat (1995)/Heat (1995).mkv")
	if err != nil || !bytes.Equal([]byte(out), heat[100000:150000]) {
		t.Errorf("rclone cat of a range: %d bytes: %v", len(out), err)
	}
	out, err = rclone(t, base, "", "cat", "--offset", "1000000", "--count", "700000", "x:From other households/The Neighbours/Movies/Arrival (2016)/Arrival (2016).mkv")
	if err != nil || !bytes.Equal([]byte(out), arrival[1000000:1700000]) {
		t.Errorf("rclone cat of a range of the friend's film: %d bytes: %v", len(out), err)
	}

	// A plain PROPFIND agrees, with sizes and the CID as ETag.
	code, entries := propfind(t, n, "/Movies/Heat (1995)/", nil)
	if code != http.StatusMultiStatus {
		t.Fatalf("PROPFIND: %d", code)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Href)
		if e.Href == "/dav/Movies/Heat (1995)/Heat (1995).mkv" {
			if e.Length != int64(len(heat)) || e.ETag != `"`+canonicalOf(t, filepath.Join(lib, "Films/Heat.1995/Heat.1995.mkv"))+`"` || e.Type != "video/x-matroska" {
				t.Errorf("PROPFIND of the film: %+v", e)
			}
		}
	}
	slices.Sort(names)
	wantNames := []string{"/dav/Movies/Heat (1995)/", "/dav/Movies/Heat (1995)/Heat (1995).eng.srt", "/dav/Movies/Heat (1995)/Heat (1995).mkv",
		"/dav/Movies/Heat (1995)/Heat (1995).nfo", "/dav/Movies/Heat (1995)/poster.jpg"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("PROPFIND hrefs %q, want %q", names, wantNames)
	}

	// cadaver's ls agrees.
	cad := exec.CommandContext(waiting.Context(t), "cadaver", base+"Movies/")
	cad.Stdin = strings.NewReader("ls\nquit\n")
	cad.Env = append(os.Environ(), "HOME="+t.TempDir())
	cout, err := cad.CombinedOutput()
	if err != nil {
		t.Fatalf("cadaver: %v: %s", err, cout)
	}
	for _, d := range []string{"AC-DC - Live (1992)", "Heat (1995)", "Twin (2001)", "Twin (2001) (2)"} {
		if !regexp.MustCompile(`(?m)Coll:\s+` + regexp.QuoteMeta(d) + `\s+\d`).Match(cout) {
			t.Errorf("cadaver ls does not list %q:\n%s", d, cout)
		}
	}

	// The .nfo files are XML with the metadata's titles.
	nfo, err := rclone(t, base, "", "cat", "x:Movies/Heat (1995)/Heat (1995).nfo")
	var movie struct {
		XMLName   xml.Name `xml:"movie"`
		Title     string   `xml:"title"`
		Year      int      `xml:"year"`
		Plot      string   `xml:"plot"`
		Genre     []string `xml:"genre"`
		UniqueIDs []struct {
			Type  string `xml:"type,attr"`
			Value string `xml:",chardata"`
		} `xml:"uniqueid"`
	}
	if err != nil || xml.Unmarshal([]byte(nfo), &movie) != nil || movie.Title != "Heat" || movie.Year != 1995 || movie.Plot != "A group of professional bank robbers." ||
		!slices.Equal(movie.Genre, []string{"Crime"}) || len(movie.UniqueIDs) != 1 || movie.UniqueIDs[0].Value != "tt0113277" {
		t.Errorf("Heat's .nfo (%v): %+v\n%s", err, movie, nfo)
	}
	nfo, err = rclone(t, base, "", "cat", "x:Movies/AC-DC - Live (1992)/AC-DC - Live (1992).nfo")
	if err != nil || xml.Unmarshal([]byte(nfo), &movie) != nil || movie.Title != "AC/DC: Live" {
		t.Errorf("AC/DC's .nfo keeps the title as it is (%v): %s", err, nfo)
	}
	var ep struct {
		XMLName   xml.Name `xml:"episodedetails"`
		Title     string   `xml:"title"`
		ShowTitle string   `xml:"showtitle"`
		Season    int      `xml:"season"`
		Episode   int      `xml:"episode"`
		Aired     string   `xml:"aired"`
	}
	nfo, err = rclone(t, base, "", "cat", "x:TV Shows/The Wire/Season 01/The Wire - S01E01 - The Target.nfo")
	if err != nil || xml.Unmarshal([]byte(nfo), &ep) != nil || ep.Title != "The Target" || ep.ShowTitle != "The Wire" || ep.Season != 1 || ep.Episode != 1 || ep.Aired != "2002-06-02" {
		t.Errorf("the episode's .nfo (%v): %+v\n%s", err, ep, nfo)
	}

	// Anything that writes is refused, with a JSON error.
	for _, m := range []string{"PUT", "DELETE", "MKCOL", "MOVE", "COPY", "PROPPATCH", "LOCK"} {
		resp, body := do(t, n, m, "/dav/Movies/Heat%20(1995)/Heat%20(1995).mkv", nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.HasPrefix(string(body), `{`) || !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s: %s %s", m, resp.Status, body)
		}
	}
	if _, err := os.Stat(filepath.Join(lib, "Films/Heat.1995/Heat.1995.mkv")); err != nil {
		t.Errorf("the library's file after the refused writes: %v", err)
	}
	// Errors are the API's: a status and a JSON error.
	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		code         int
	}{
		{"GET", "/dav/Movies/", nil, http.StatusMethodNotAllowed},
		{"GET", "/dav/Movies/Nope.mkv", nil, http.StatusNotFound},
		{"PROPFIND", "/dav/Nope/", map[string]string{"Depth": "1"}, http.StatusNotFound},
		{"PROPFIND", "/dav/Movies/", map[string]string{"Depth": "2"}, http.StatusBadRequest},
		{"GET", "/dav/Movies/../../etc/passwd", nil, http.StatusNotFound},
	} {
		resp, body := do(t, n, tc.method, tc.path, tc.hdr)
		var e struct{ Error string }
		if resp.StatusCode != tc.code || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %s %s, want %d with a JSON error", tc.method, tc.path, resp.Status, body, tc.code)
		}
	}
	resp, _ := do(t, n, "OPTIONS", "/dav/", nil)
	if resp.StatusCode != 200 || resp.Header.Get("DAV") == "" || strings.Contains(resp.Header.Get("Allow"), "PUT") {
		t.Errorf("OPTIONS: %s DAV %q Allow %q", resp.Status, resp.Header.Get("DAV"), resp.Header.Get("Allow"))
	}

	// A new file shows in the share once the library takes it in.
	late := make([]byte, 5<<10)
	rand.Read(late)
	writeOld(t, filepath.Join(lib, "Films/Late/Late Show (2020).mkv"), late)
	waiting.Until(t, "the new film in the share", func() string {
		out, err := rclone(t, base, "", "cat", "x:Movies/Late Show (2020)/Late Show (2020).mkv")
		if err != nil || !bytes.Equal([]byte(out), late) {
			return fmt.Sprintf("%d bytes: %v", len(out), err)
		}
		return ""
	}, waiting.Every(200*time.Millisecond))
}

// TestDAV_Access: off loopback the share takes the API token as the HTTP
// Basic password (any user name); without it or with another it answers
// 401 with a Basic challenge. --public-read opens the household's own
// files, never the folder of other households'.
func TestDAV_Access(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := make([]byte, 30<<10)
	rand.Read(data)
	writeOld(t, filepath.Join(lib, "Heat (1995).mkv"), data)
	friendLib := t.TempDir()
	arrival := make([]byte, 40<<10)
	rand.Read(arrival)
	writeOld(t, filepath.Join(friendLib, "Arrival (2016).mkv"), arrival)
	friend := startNodeWith(t, friendLib, func(c *node.Config) { c.ShareFiles = true; c.Name = "The Neighbours" })
	tokFile := filepath.Join(t.TempDir(), "tok")
	n := startNodeWith(t, lib, func(c *node.Config) { c.APIAddr = "0.0.0.0:0"; c.APITokenFile = tokFile; c.PublicRead = true })
	if err := connect(n, friend); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	basic := func(user, pass string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	}
	resp, body := do(t, n, "GET", "/api/meta/"+canonicalOf(t, filepath.Join(friendLib, "Arrival (2016).mkv")), map[string]string{"Authorization": "Bearer " + tok})
	if resp.StatusCode != 200 {
		t.Fatalf("learning the friend's record: %s %s", resp.Status, body)
	}
	friendFilm := "/dav/From%20other%20households/The%20Neighbours/Movies/Arrival%20(2016)/Arrival%20(2016).mkv"
	waiting.Until(t, "the friend's film in the share", func() string {
		resp, body := do(t, n, "GET", friendFilm, basic("kodi", tok))
		if resp.StatusCode != 200 || !bytes.Equal(body, arrival) {
			return fmt.Sprintf("%s %.200s", resp.Status, body)
		}
		return ""
	}, waiting.Every(200*time.Millisecond))

	film := "/dav/Movies/Heat%20(1995)/Heat%20(1995).mkv"
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
		code       int
	}{
		{"public-read: the household's film", film, nil, 200},
		{"public-read: the friend's film without credentials", friendFilm, nil, 401},
		{"public-read: the friend's folder without credentials", "/dav/From%20other%20households/", nil, 401},
		{"wrong password", film, basic("kodi", strings.Repeat("0", len(tok))), 401},
		{"wrong password, the friend's film", friendFilm, basic("", "nope"), 401},
		{"the token as the password, any user", friendFilm, basic("", tok), 200},
		{"the token as a bearer token", friendFilm, map[string]string{"Authorization": "Bearer " + tok}, 200},
		{"a wrong bearer token", film, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"a page of another site", film, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, n, "GET", tc.path, tc.hdr)
			if resp.StatusCode != tc.code {
				t.Fatalf("%s, want %d: %.300s", resp.Status, tc.code, body)
			}
			if tc.code == 401 && resp.Header.Get("WWW-Authenticate") != `Basic realm="metamesh"` {
				t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}

	// Without credentials the top does not list other households' folder;
	// with the token it does.
	_, entries := propfind(t, n, "/", nil)
	for _, e := range entries {
		if strings.Contains(e.Href, "other households") {
			t.Errorf("PROPFIND without credentials lists %s", e.Href)
		}
	}
	_, entries = propfind(t, n, "/", basic("x", tok))
	if !slices.ContainsFunc(entries, func(e davEntry) bool { return e.Href == "/dav/From other households/" }) {
		t.Errorf("PROPFIND with the token: %+v", entries)
	}

	// rclone: with the token as its password it lists and reads the
	// friend's film; with a wrong one it is refused.
	base := "http://" + n.APIAddr() + "/dav/"
	out, err := rclone(t, base, tok, "cat", "x:From other households/The Neighbours/Movies/Arrival (2016)/Arrival (2016).mkv")
	if err != nil || !bytes.Equal([]byte(out), arrival) {
		t.Errorf("rclone with the token: %d bytes: %v", len(out), err)
	}
	if out, err := rclone(t, base, "wrong", "lsf", "x:From other households/"); err == nil {
		t.Errorf("rclone with a wrong password listed %q", out)
	}
}
