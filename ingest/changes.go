package ingest

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// What a change applied to the store did to a path, as its log line
// begins.
const (
	changeAdded   = "added"   // a new path (a new file, or a duplicate of one)
	changeChanged = "changed" // new content at a known path
	changeDeleted = "deleted" // the path left the library
	changeRenamed = "renamed" // a move, the file kept its root
)

// namesShown is how many names a line about several changes gives.
const namesShown = 3

// changeGroup is the changes of one kind in one library since the last
// lines were written.
type changeGroup struct {
	kind    string
	library string   // "" for a path under no configured library
	count   int      // how many
	names   []string // the first namesShown, as shown
}

// line is the group's log message: "added Films/a.mkv" for one change,
// "added 240 files: a.mkv, b.mkv, c.mkv, …" for more.
func (g *changeGroup) line() string {
	if g.count == 1 {
		return g.kind + " " + g.names[0]
	}
	s := fmt.Sprintf("%s %d files: %s", g.kind, g.count, strings.Join(g.names, ", "))
	if g.count > len(g.names) {
		s += ", …"
	}
	return s
}

// changeLog collects the changes workers apply, until the loop writes
// them out. It keeps namesShown names per group, however
// large the burst.
type changeLog struct {
	mu     sync.Mutex
	groups []*changeGroup // in the order their first change came
}

func (c *changeLog) add(kind, library, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		if g.kind == kind && g.library == library {
			g.count++
			switch {
			case len(g.names) < namesShown:
				g.names = append(g.names, name)
			case videoName(name):
				// The videos of a burst are what its line should name,
				// before their NFOs, posters and subtitles.
				for i, n := range g.names {
					if !videoName(n) {
						g.names = append(append(g.names[:i:i], g.names[i+1:]...), name)
						break
					}
				}
			}
			return
		}
	}
	c.groups = append(c.groups, &changeGroup{kind: kind, library: library, count: 1, names: []string{name}})
}

// videoName reports whether a name (a path, or a name as shown) is a
// video's, by its extension.
func videoName(name string) bool {
	return videoByExtension[strings.ToLower(filepath.Ext(name))] != ""
}

// take returns the groups collected and starts again.
func (c *changeLog) take() []*changeGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups
	c.groups = nil
	return g
}

// applied tells Config.OnApplied of a change, and records it for the
// log, whether the watcher or a full scan applied it: the first scan
// after a restart tells what changed while the node was stopped as the
// watcher tells it while it runs. Only a first ingest's changes
// (fromScan, while the scan runs on a store that knew no file of its
// libraries: every file is new) are left to its progress lines and
// "scan finished". from is a rename's old path.
func (in *Ingester) applied(fromScan bool, kind, path, from string) {
	if in.cfg.OnApplied != nil {
		in.cfg.OnApplied(path, from)
	}
	if fromScan && in.firstIngest.Load() {
		return
	}
	lib := in.libraryOf(path)
	name := shownPath(lib, path)
	if from != "" {
		name = shownPath(lib, from) + " → " + name
	}
	in.changes.add(kind, lib, name)
}

// shownPath is p as a change line names it: relative to its library
// (the line carries the library), absolute when it is not under lib (the
// old end of a move from another library, a path under no library).
func shownPath(lib, p string) string {
	if lib == "" || p == lib || !within(lib, p) {
		return p
	}
	rel, err := filepath.Rel(lib, p)
	if err != nil {
		return p
	}
	return rel
}

// logChanges writes a line per group of changes applied since the last
// call, if any: the loop calls it whenever it goes idle, reportProgress
// every ProgressInterval during a long burst.
func (in *Ingester) logChanges() {
	for _, g := range in.changes.take() {
		if g.library == "" {
			in.log.Info(g.line())
			continue
		}
		in.log.Info(g.line(), "library", g.library)
	}
}
