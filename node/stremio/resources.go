package stremio

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"

	"github.com/metamesh/node/node/catalog"
	"github.com/metamesh/node/store"
)

// The types and catalogs the add-on serves.
const (
	TypeMovie     = "movie"
	TypeSeries    = "series"
	CatalogMovies = "metamesh-movies"
	CatalogSeries = "metamesh-series"
	// PageSize is how many items one catalog answer holds at most;
	// Stremio asks for the next with skip.
	PageSize = 100
)

// id is the add-on's ID: org.metamesh. and the end of the node's peer
// ID, the same in the manifest and in the streams' binge groups.
func (a *Addon) id() string {
	short := a.cfg.PeerID
	if len(short) > 8 {
		short = short[len(short)-8:]
	}
	return "org.metamesh." + short
}

// manifest is the add-on's manifest.
func (a *Addon) manifest() Manifest {
	name := a.cfg.Name
	if name == "" {
		name = "MetaMesh"
	}
	extra := []ExtraDecl{{Name: "search"}, {Name: "skip"}}
	return Manifest{
		ID: a.id(), Version: semver(a.cfg.Version), Name: name,
		Description: "The films and shows of " + name + "'s MetaMesh node, played from the node.",
		Resources:   []string{"catalog", "meta", "stream"}, Types: []string{TypeMovie, TypeSeries},
		Catalogs: []CatalogDecl{
			{Type: TypeMovie, ID: CatalogMovies, Name: name + " · Films", Extra: extra},
			{Type: TypeSeries, ID: CatalogSeries, Name: name + " · Shows", Extra: extra},
		},
		IDPrefixes: []string{"tt", prefixOwn},
	}
}

var semverRE = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)`)

// semver is the node's version as the protocol wants it (x.y.z), 0.0.0
// for a build without one.
func semver(v string) string {
	if m := semverRE.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return "0.0.0"
}

// catalogRequest answers catalog/<type>/<id>[/<extra>].json.
func (a *Addon) catalogRequest(w http.ResponseWriter, r *http.Request, typ string, rest []string) {
	if want := map[string]string{TypeMovie: CatalogMovies, TypeSeries: CatalogSeries}[typ]; rest[0] != want {
		writeError(w, http.StatusNotFound, "catalog "+quote(rest[0])+" of type "+typ+": this add-on's is "+want)
		return
	}
	var e Extra
	if len(rest) == 2 {
		var err error
		if e, err = ParseExtra(rest[1]); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	base := a.base(r)
	out := CatalogAnswer{Metas: []MetaPreview{}}
	switch {
	case e.Search != "":
		metas, err := a.search(r, typ, e.Search, base)
		if err != nil {
			failed(w, "search", err)
			return
		}
		out.Metas = metas[min(e.Skip, len(metas)):min(e.Skip+PageSize, len(metas))]
	case typ == TypeMovie:
		films, _ := a.cat.Films(e.Skip, PageSize)
		for _, f := range films {
			out.Metas = append(out.Metas, filmPreview(f, base))
		}
	default:
		shows, _ := a.cat.Shows(e.Skip, PageSize)
		for _, s := range shows {
			out.Metas = append(out.Metas, showPreview(s, base))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// search is the items of typ the household's search for q finds, best
// first: its films, or the shows of the episodes it finds.
func (a *Addon) search(r *http.Request, typ, q, base string) ([]MetaPreview, error) {
	hits, err := a.src.Search(r.Context(), q, 100)
	if err != nil {
		return nil, err
	}
	out := []MetaPreview{}
	seen := map[string]bool{}
	for _, h := range hits {
		if h.Source != "local" || seen[h.CID] {
			continue
		}
		switch {
		case typ == TypeMovie && h.Episode == nil:
			for _, f := range a.cat.Film(h.CID) {
				out = append(out, filmPreview(f, base))
			}
			seen[h.CID] = true
		case typ == TypeSeries && h.Episode != nil:
			key := catalog.ShowKey(h.Title)
			if s, ok := a.cat.Show(key); ok && !seen[key] {
				out = append(out, showPreview(s, base))
			}
			seen[key] = true
		}
	}
	return out, nil
}

// filmID is a film's item ID: its IMDb ID, else mm:<cid>.
func filmID(f store.Summary) ID {
	if f.IMDbID != "" {
		return ID{IMDb: f.IMDbID}
	}
	return ID{CID: f.CID}
}

// showItem is a show's item ID: its IMDb ID, else mm:show:<key>.
func showItem(s catalog.Show) ID {
	if s.IMDbID != "" {
		return ID{IMDb: s.IMDbID}
	}
	return ID{Show: s.Key}
}

func filmPreview(f store.Summary, base string) MetaPreview {
	return MetaPreview{ID: filmID(f).String(), Type: TypeMovie, Name: f.Title, Poster: thumb(base, f.Poster, 0),
		PosterShape: "poster", ReleaseInfo: year(f.Year)}
}

func showPreview(s catalog.Show, base string) MetaPreview {
	return MetaPreview{ID: showItem(s).String(), Type: TypeSeries, Name: s.Title, Poster: thumb(base, s.Poster, 0),
		PosterShape: "poster", ReleaseInfo: year(s.Year)}
}

// thumb is the URL of a thumbnail of image c (width 0: the API's
// default), "" for no image.
func thumb(base, c string, width int) string {
	if c == "" {
		return ""
	}
	u := base + "/thumb/" + url.PathEscape(c)
	if width > 0 {
		u += "?w=" + strconv.Itoa(width)
	}
	return u
}

func year(y int) string {
	if y <= 0 {
		return ""
	}
	return strconv.Itoa(y)
}

// metaRequest answers meta/<type>/<id>.json.
func (a *Addon) metaRequest(w http.ResponseWriter, r *http.Request, typ, raw string) {
	id, ok := a.itemID(w, typ, raw)
	if !ok {
		return
	}
	base := a.base(r)
	if typ == TypeMovie {
		films := a.cat.Film(id.IMDb + id.CID)
		if len(films) == 0 {
			writeError(w, http.StatusNotFound, "no film "+id.String()+" in this household's library")
			return
		}
		fs, err := a.src.Fields(r.Context(), []store.RootID{films[0].Root})
		if err != nil {
			failed(w, "read the film", err)
			return
		}
		writeJSON(w, http.StatusOK, MetaAnswer{Meta: filmMeta(id, films[0], fs[0], base)})
		return
	}
	s, ok := a.show(id)
	if !ok {
		writeError(w, http.StatusNotFound, "no show "+id.String()+" in this household's library")
		return
	}
	roots := make([]store.RootID, len(s.List))
	for i, e := range s.List {
		roots[i] = e.Root
	}
	fs, err := a.src.Fields(r.Context(), roots)
	if err != nil {
		failed(w, "read the show's episodes", err)
		return
	}
	writeJSON(w, http.StatusOK, MetaAnswer{Meta: showMeta(id, s, fs, base)})
}

// itemID reads the ID of a meta request: an item of typ, not an
// episode; false once it answered an error.
func (a *Addon) itemID(w http.ResponseWriter, typ, raw string) (ID, bool) {
	id, err := unescapeID(raw)
	switch {
	case err != nil:
	case id.Episode:
		err = errorf("ID %s names an episode: meta takes a film's or a show's ID", id)
	case typ == TypeMovie && id.Show != "":
		err = errorf("ID %s is a show's: ask meta/series", id)
	case typ == TypeSeries && id.CID != "":
		err = errorf("ID %s is a film's: ask meta/movie", id)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return ID{}, false
	}
	return id, true
}

// unescapeID reads an ID as a path segment carries it.
func unescapeID(raw string) (ID, error) {
	s, err := url.PathUnescape(raw)
	if err != nil {
		return ID{}, errorf("ID %.80q: bad escape in the path", raw)
	}
	return ParseID(s)
}

// show is the household's show an ID (not an episode's) names.
func (a *Addon) show(id ID) (catalog.Show, bool) {
	key := id.Show
	if id.IMDb != "" {
		var ok bool
		if key, ok = a.cat.ShowByIMDb(id.IMDb); !ok {
			return catalog.Show{}, false
		}
	}
	return a.cat.Show(key)
}

// filmMeta is a film's meta from its entry and its fields.
func filmMeta(id ID, f store.Summary, fields map[string]string, base string) Meta {
	m := Meta{ID: id.String(), Type: TypeMovie, Name: f.Title, Poster: thumb(base, f.Poster, 0), PosterShape: "poster",
		ReleaseInfo: year(f.Year), Year: f.Year, IMDbID: f.IMDbID, BehaviorHints: &MetaHints{DefaultVideoID: id.String()}}
	describe(&m, fields, base)
	m.Released = released(fields, f.Year)
	return m
}

// showMeta is a show's meta, its episodes (fields, in s.List's order)
// its videos by season and episode, one per episode however many files
// hold it.
func showMeta(id ID, s catalog.Show, fields []map[string]string, base string) Meta {
	item := showItem(s)
	m := Meta{ID: item.String(), Type: TypeSeries, Name: s.Title, Poster: thumb(base, s.Poster, 0), PosterShape: "poster",
		ReleaseInfo: year(s.Year), Year: s.Year, IMDbID: s.IMDbID, Videos: []Video{}}
	for i, e := range s.List {
		f := fields[i]
		if i == 0 && f != nil {
			describe(&m, f, base)
		}
		if n := len(m.Videos); n > 0 && m.Videos[n-1].Season == *e.Season && m.Videos[n-1].Episode == *e.Episode {
			continue
		}
		v := item
		v.Episode, v.Season, v.Number = true, *e.Season, *e.Episode
		title := e.EpisodeTitle
		if title == "" {
			title = "Episode " + strconv.Itoa(*e.Episode)
		}
		m.Videos = append(m.Videos, Video{ID: v.String(), Title: title, Season: *e.Season, Episode: *e.Episode,
			Released: released(f, e.Year), Overview: plot(f), Thumbnail: thumb(base, e.Poster, 0)})
	}
	return m
}

// describe fills a meta's description, background and genres from an
// item's fields.
func describe(m *Meta, f map[string]string, base string) {
	m.Description = plot(f)
	m.Background = thumb(base, f["art/fanart"], 1280)
	for i := 0; ; i++ {
		g := f["genre/"+strconv.Itoa(i)]
		if g == "" {
			break
		}
		m.Genres = append(m.Genres, g)
	}
	if g := f["genre"]; g != "" && len(m.Genres) == 0 {
		m.Genres = []string{g}
	}
	if d, err := strconv.ParseFloat(f["fileinfo/duration"], 64); err == nil && d >= 60 {
		m.Runtime = strconv.Itoa(int(d/60+0.5)) + " min"
	}
}

// plot is an item's plot: in English, else the first language's, else
// a plot of no language.
func plot(f map[string]string) string {
	if p := f["plot/eng"]; p != "" {
		return p
	}
	var langs []string
	for k := range f {
		if len(k) > 5 && k[:5] == "plot/" {
			langs = append(langs, k)
		}
	}
	if len(langs) > 0 {
		slices.Sort(langs)
		return f[langs[0]]
	}
	return f["plot"]
}

// released is an item's release day as the protocol writes it (ISO
// 8601): its releasedate, else the first of January of its year, else
// the epoch (the protocol wants one for every video).
func released(f map[string]string, y int) string {
	if d := f["releasedate"]; len(d) == 10 {
		return d + "T00:00:00.000Z"
	}
	if y > 0 {
		return strconv.Itoa(y) + "-01-01T00:00:00.000Z"
	}
	return "1970-01-01T00:00:00.000Z"
}
