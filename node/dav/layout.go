package dav

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The folders of the share's top, and of each other household's folder
// (but HouseholdsDir).
const (
	MoviesDir     = "Movies"
	ShowsDir      = "TV Shows"
	OtherDir      = "Other videos"
	HouseholdsDir = "From other households"
)

// Entry is a file or a folder of the share.
type Entry struct {
	Name    string
	Dir     bool
	ModTime time.Time
	// A folder's entries, by name.
	kids  []*Entry
	index map[string]*Entry
	// A file's size, and what its bytes are: Data when the share made
	// them (an .nfo), else the file of CID, a peer's when Peer.
	Size int64
	CID  string
	Peer bool
	Data []byte
}

// Entries are a folder's entries, by name.
func (e *Entry) Entries() []*Entry { return e.kids }

// dir is the folder name of e, made when missing.
func (e *Entry) dir(name string) *Entry {
	if d := e.index[strings.ToLower(name)]; d != nil {
		return d
	}
	d := &Entry{Name: name, Dir: true}
	e.add(d)
	return d
}

// add puts x among e's entries (a name taken, case aside, is not put
// twice).
func (e *Entry) add(x *Entry) bool {
	if e.index == nil {
		e.index = map[string]*Entry{}
	}
	k := strings.ToLower(x.Name)
	if e.index[k] != nil {
		return false
	}
	e.index[k] = x
	e.kids = append(e.kids, x)
	return true
}

// finish sorts every folder's entries and dates each folder by its
// newest entry.
func (e *Entry) finish() time.Time {
	slices.SortFunc(e.kids, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	for _, k := range e.kids {
		t := k.ModTime
		if k.Dir {
			t = k.finish()
		}
		if t.After(e.ModTime) {
			e.ModTime = t
		}
	}
	return e.ModTime
}

// Tree is the share as laid out at one moment.
type Tree struct{ Root *Entry }

// Find is the entry at p ("/" or "" the top, "/Movies/…"), nil when
// there is none.
func (t *Tree) Find(p string) *Entry {
	e := t.Root
	for _, part := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if part == "" {
			continue
		}
		if e = e.index[strings.ToLower(part)]; e == nil {
			return nil
		}
	}
	return e
}

// Layout lays the share out from items (every root: the videos, and the
// subtitles and posters they link to), never from the library's
// folders:
//
//	Movies/<Title> (<Year>)/<Title> (<Year>).<ext>, .nfo, .<lang>.srt, poster.jpg
//	TV Shows/<Show>/tvshow.nfo, poster.jpg, Season NN/<Show> - SNNEMM - <Episode title>.<ext>, .nfo, .<lang>.srt
//	Other videos/<Title>.<ext>, .nfo, .<lang>.srt
//	From other households/<household>/Movies|TV Shows|Other videos/…
//
// household names the household of a peer's file (by the peer's ID).
// Names are made safe (SafeName); two that would be the same get " (2)",
// … in the order of the roots (the older keeps the plain name); a root
// is one file, so a file held under two paths is shown once.
func Layout(items []Item, household func(peer string) string) *Tree {
	byCID := make(map[string]*Item, len(items))
	var videos []*Item
	for i := range items {
		it := &items[i]
		if it.CID == "" {
			continue
		}
		byCID[it.CID] = it
		if it.FileType == "video" || (!it.Local() && it.FileType == "") {
			videos = append(videos, it)
		}
	}
	slices.SortFunc(videos, func(a, b *Item) int { return cmp.Compare(a.Root, b.Root) })
	l := &layout{byCID: byCID, top: &Entry{Dir: true}, shows: map[*Entry]map[string]*Entry{}}
	homes := map[string]*Entry{} // by peer
	var peers []string
	for _, it := range videos {
		if !it.Local() && homes[it.Peer] == nil {
			homes[it.Peer] = &Entry{Dir: true}
			peers = append(peers, it.Peer)
		}
	}
	if len(peers) > 0 {
		slices.Sort(peers)
		hh := l.top.dir(HouseholdsDir)
		var taken names
		for _, p := range peers {
			homes[p].Name = taken.unique(SafeName(household(p)))
			hh.add(homes[p])
		}
	}
	for _, it := range videos {
		top := l.top
		if !it.Local() {
			top = homes[it.Peer]
		}
		l.place(top, it)
	}
	l.top.finish()
	return &Tree{Root: l.top}
}

// layout is one Layout's work.
type layout struct {
	byCID map[string]*Item
	top   *Entry
	// shows are the shows' folders under each top, by folded name.
	shows map[*Entry]map[string]*Entry
	// bases are the names handed out in each folder.
	bases map[*Entry]*names
}

// place puts a video and its sidecars under top.
func (l *layout) place(top *Entry, it *Item) {
	switch kind(it) {
	case "movie":
		title := it.Title
		if it.Year > 0 {
			title += " (" + strconv.Itoa(it.Year) + ")"
		}
		movies := top.dir(MoviesDir)
		base := l.names(movies).unique(SafeName(title))
		d := &Entry{Name: base, Dir: true}
		movies.add(d)
		l.files(d, base, it, movieNFO(*it))
		l.poster(d, it, it.Poster)
	case "episode":
		show := l.show(top, it)
		season := show.dir(fmt.Sprintf("Season %02d", *it.Season))
		name := fmt.Sprintf("%s - S%02dE%02d", it.Title, *it.Season, *it.Episode)
		if it.EpisodeTitle != "" {
			name += " - " + it.EpisodeTitle
		}
		l.files(season, l.names(season).unique(SafeName(name)), it, episodeNFO(*it))
	default:
		other := top.dir(OtherDir)
		title := it.Title
		if it.Ext != "" && strings.EqualFold(path.Ext(title), it.Ext) {
			title = title[:len(title)-len(it.Ext)] // a title that is the file's name
		}
		l.files(other, l.names(other).unique(SafeName(title)), it, movieNFO(*it))
	}
}

// kind is where a video goes: "movie", "episode" or "other".
func kind(it *Item) string {
	switch {
	case it.Season != nil && it.Episode != nil:
		return "episode"
	case it.VideoType == "movie", it.VideoType == "" && it.Year > 0:
		return "movie"
	}
	return "other"
}

// names are the names handed out in folder d.
func (l *layout) names(d *Entry) *names {
	if l.bases == nil {
		l.bases = map[*Entry]*names{}
	}
	n := l.bases[d]
	if n == nil {
		n = &names{}
		for _, k := range d.kids {
			n.take(k.Name)
		}
		l.bases[d] = n
	}
	return n
}

// show is the folder of it's show under top, made (with its tvshow.nfo
// and the poster of its first episode) when missing. Shows are told
// apart by their names made safe, case aside.
func (l *layout) show(top *Entry, it *Item) *Entry {
	shows := top.dir(ShowsDir)
	byName := l.shows[top]
	if byName == nil {
		byName = map[string]*Entry{}
		l.shows[top] = byName
	}
	name := SafeName(it.Title)
	key := strings.ToLower(name)
	s := byName[key]
	if s == nil {
		s = &Entry{Name: l.names(shows).unique(name), Dir: true}
		shows.add(s)
		byName[key] = s
		nfo := showNFO(it.Title)
		s.add(&Entry{Name: "tvshow.nfo", Size: int64(len(nfo)), Data: nfo, ModTime: it.ModTime})
	}
	if s.index["poster.jpg"] == nil && s.index["poster.png"] == nil {
		l.poster(s, it, it.Poster)
	}
	return s
}

// files puts a video's file, its .nfo and its subtitles in folder d,
// named base.<ext>, base.nfo and base.<lang>.<ext> (base.<lang>.2.<ext>
// for a language's second).
func (l *layout) files(d *Entry, base string, it *Item, nfo []byte) {
	d.add(&Entry{Name: base + it.Ext, Size: it.Size, CID: it.CID, Peer: !it.Local(), ModTime: it.ModTime})
	d.add(&Entry{Name: base + ".nfo", Size: int64(len(nfo)), Data: nfo, ModTime: it.ModTime})
	n := map[string]int{}
	for _, s := range it.Subtitles {
		sub := l.sidecar(it, s.CID)
		if sub == nil {
			continue
		}
		lang := SafeName(s.Lang)
		n[lang]++
		name := base + "." + lang
		if n[lang] > 1 {
			name += "." + strconv.Itoa(n[lang])
		}
		d.add(&Entry{Name: name + cmp.Or(sub.Ext, ".srt"), Size: sub.Size, CID: sub.CID, Peer: !sub.Local(), ModTime: sub.ModTime})
	}
}

// sidecar is the item of CID c a video links to: for a local video only
// a local file (a file known only from peers is fetched from them, and
// shown only with the peers' files, in the part of the share that is
// the household's own clients'); nil when there is none.
func (l *layout) sidecar(video *Item, c string) *Item {
	s := l.byCID[c]
	if s == nil || (video.Local() && !s.Local()) {
		return nil
	}
	return s
}

// poster puts the poster of CID c, video's, in folder d as poster.<ext>.
func (l *layout) poster(d *Entry, video *Item, c string) {
	if p := l.sidecar(video, c); p != nil {
		d.add(&Entry{Name: "poster" + cmp.Or(p.Ext, ".jpg"), Size: p.Size, CID: p.CID, Peer: !p.Local(), ModTime: p.ModTime})
	}
}
