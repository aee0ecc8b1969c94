package catalog

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// A copy is what the catalog keeps of a local video, or of another local
// file held under several paths, for GET /api/duplicates: the path and
// the encoding of the file beside its entry, its other paths and, for a
// video, the work it is (its keys). Other local files and files known
// only from peers have none.
type fileCopy struct {
	entry store.Summary
	copy  model.DuplicateCopy
	// paths are the file's other local paths (the document's first
	// store.MaxDuplicates), more how many there are in all.
	paths []string
	more  int64
	// works are the keys of the work a video is: two files sharing one
	// are the same film or episode. Nil for another file.
	works []string
}

// dupeField reports the fields a copy reads beyond its entry's: a write to
// one has the root read again (Consumer).
func dupeField(f string) bool {
	return f == "duplicates" || strings.HasPrefix(f, "fileinfo/") || strings.HasPrefix(f, "release/")
}

// copyOf is what the catalog keeps of d for the duplicates, nil for a
// root it keeps none of.
func copyOf(d store.Document, e store.Summary) *fileCopy {
	video := e.FileType == "video"
	if !d.Local() || e.CID == "" || !video && d.DuplicateCount == 0 {
		return nil
	}
	f := d.Fields
	c := &fileCopy{entry: e, paths: d.Duplicates, more: d.DuplicateCount}
	c.copy = model.DuplicateCopy{CID: e.CID, Path: d.FilePath(), Size: e.Size,
		Resolution: resolution(f), VideoCodec: firstOf(f, "fileinfo/streamdetails/video/0/codec", "release/videoCodec"),
		AudioCodec: firstOf(f, "fileinfo/streamdetails/audio/0/codec", "release/audioCodec")}
	if s, err := strconv.ParseFloat(f["fileinfo/duration"], 64); err == nil && s > 0 && s < math.MaxInt32 {
		c.copy.Runtime = int(math.Round(s))
	}
	if !video {
		return c
	}
	title := fold(e.Title)
	if episode(e) {
		se := strconv.Itoa(*e.Season) + "|" + strconv.Itoa(*e.Episode)
		c.works = append(c.works, "episode:"+title+"|"+se)
		if e.IMDbID != "" { // an episode's ID may be its show's
			c.works = append(c.works, "imdb:"+e.IMDbID+"|"+se)
		}
		return c
	}
	c.works = append(c.works, "film:"+title+"|"+strconv.Itoa(e.Year))
	if e.IMDbID != "" {
		c.works = append(c.works, "imdb:"+e.IMDbID)
	}
	return c
}

// resolution is ffprobe's width×height of the first video stream, else
// what the name says.
func resolution(f map[string]string) string {
	w, h := f["fileinfo/streamdetails/video/0/width"], f["fileinfo/streamdetails/video/0/height"]
	if w != "" && h != "" {
		return w + "x" + h
	}
	return f["release/resolution"]
}

// firstOf is the first of fields f holds.
func firstOf(f map[string]string, fields ...string) string {
	for _, k := range fields {
		if v := f[k]; v != "" {
			return v
		}
	}
	return ""
}

// putCopies puts what roots' documents give in the duplicates' copies
// (a batch Take took), and none for a root gone.
func (c *Catalog) putCopies(roots []store.Changed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range roots {
		delete(c.copies, r.Root)
		if !r.Exists {
			continue
		}
		if l, ok := c.entries[r.Root]; ok {
			if fc := copyOf(r.Document, l.Summary); fc != nil {
				c.copies[r.Root] = fc
			}
		}
	}
	c.dupes = nil
}

// Duplicates answers GET /api/duplicates: one page of the groups of
// q.By, the most wasted bytes first. The groups are made from the
// copies in memory once per change of the catalog, and kept until the
// next.
func (c *Catalog) Duplicates(q model.DuplicatesQuery) model.DuplicatesPage {
	groups, loaded := c.duplicateGroups(q.By)
	p := model.DuplicatesPage{By: q.By, Page: q.Page, Limit: q.Limit, Total: len(groups), Loaded: loaded, Groups: []model.DuplicateGroup{}}
	p.Pages = (p.Total + q.Limit - 1) / q.Limit
	for _, g := range groups {
		p.Wasted += g.Wasted
	}
	lo := min((q.Page-1)*q.Limit, p.Total)
	p.Groups = append(p.Groups, groups[lo:min(lo+q.Limit, p.Total)]...)
	return p
}

// duplicateGroups are the sorted groups of by, made again when the
// catalog changed since they were last made.
func (c *Catalog) duplicateGroups(by string) ([]model.DuplicateGroup, bool) {
	c.mu.RLock()
	if d := c.dupes; d != nil && d[by] != nil {
		defer c.mu.RUnlock()
		return d[by], c.loaded
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dupes == nil {
		c.dupes = map[string][]model.DuplicateGroup{}
	}
	if c.dupes[by] == nil {
		if by == model.DuplicatesByContent {
			c.dupes[by] = contentGroups(c.copies)
		} else {
			c.dupes[by] = titleGroups(c.copies)
		}
	}
	return c.dupes[by], c.loaded
}

// contentGroups are the files with other paths: each its paths.
func contentGroups(copies map[store.RootID]*fileCopy) []model.DuplicateGroup {
	groups := []model.DuplicateGroup{}
	for _, fc := range copies {
		if fc.more == 0 {
			continue
		}
		g := groupOf(fc.entry, fc.copy.CID)
		g.Count = int(min(fc.more+1, math.MaxInt32))
		g.Size, g.Wasted = fc.copy.Size*int64(g.Count), fc.copy.Size*int64(g.Count-1)
		g.Copies = append(g.Copies, fc.copy)
		for _, p := range fc.paths {
			cp := fc.copy
			cp.Path = p
			g.Copies = append(g.Copies, cp)
		}
		groups = append(groups, g)
	}
	sortGroups(groups)
	return groups
}

// titleGroups are the works held as more than one file: the files that
// share a key (an IMDb ID, a title and year, a show's episode), and
// those that share one with them.
func titleGroups(copies map[store.RootID]*fileCopy) []model.DuplicateGroup {
	parent := map[string]string{} // the keys' union-find forest
	var find func(k string) string
	find = func(k string) string {
		p, ok := parent[k]
		if !ok || p == k {
			parent[k] = k
			return k
		}
		r := find(p)
		parent[k] = r
		return r
	}
	for _, fc := range copies {
		if len(fc.works) == 0 {
			continue
		}
		for _, w := range fc.works[1:] {
			a, b := find(fc.works[0]), find(w)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	members := map[string][]*fileCopy{}
	for _, fc := range copies {
		if len(fc.works) == 0 {
			continue
		}
		r := find(fc.works[0])
		members[r] = append(members[r], fc)
	}
	groups := []model.DuplicateGroup{}
	for key, fcs := range members {
		if len(fcs) < 2 {
			continue
		}
		slices.SortFunc(fcs, func(a, b *fileCopy) int {
			return cmp.Or(cmp.Compare(b.copy.Size, a.copy.Size), cmp.Compare(a.copy.Path, b.copy.Path), cmp.Compare(a.copy.CID, b.copy.CID))
		})
		g := groupOf(fcs[0].entry, key)
		g.Count = len(fcs)
		for _, fc := range fcs {
			g.Size += fc.copy.Size
			g.Copies = append(g.Copies, fc.copy)
			if g.IMDbID == "" {
				g.IMDbID = fc.entry.IMDbID
			}
		}
		g.Wasted = g.Size - fcs[0].copy.Size
		groups = append(groups, g)
	}
	sortGroups(groups)
	return groups
}

// groupOf is a group named key, titled as entry e is.
func groupOf(e store.Summary, key string) model.DuplicateGroup {
	return model.DuplicateGroup{Key: key, Title: e.Title, Year: e.Year, Season: e.Season, Episode: e.Episode,
		EpisodeTitle: e.EpisodeTitle, IMDbID: e.IMDbID}
}

// sortGroups sorts groups the most wasted bytes first, then by key.
func sortGroups(groups []model.DuplicateGroup) {
	slices.SortFunc(groups, func(a, b model.DuplicateGroup) int {
		return cmp.Or(cmp.Compare(b.Wasted, a.Wasted), cmp.Compare(a.Key, b.Key))
	})
}

// folderLocked lists the household's videos whose path is below dir, by
// path (GET /api/library?folder=): a walk of every copy, as a household
// asks it once for an action on a folder; c.mu held.
func (c *Catalog) folderLocked(dir string) []*listed {
	type at struct {
		path string
		l    *listed
	}
	var found []at
	for r, cp := range c.copies {
		if l := c.entries[r]; l != nil && l.FileType == "video" && strings.HasPrefix(cp.copy.Path, dir+"/") {
			found = append(found, at{cp.copy.Path, l})
		}
	}
	slices.SortFunc(found, func(a, b at) int { return cmp.Compare(a.path, b.path) })
	out := make([]*listed, len(found))
	for i, f := range found {
		out[i] = f.l
	}
	return out
}
