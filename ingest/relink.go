package ingest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/metamesh/node/store"
)

// Relinking: a video's name, NFO and sidecar link fields follow its
// sidecars. A sidecar's job lists the videos it belongs to
// (relinkTargets); each of them is then relinked in a job of its own
// (jobRelink), which the loop starts only while no other job holds the
// video. So the links of one video are read and written by one job at a
// time, after the write of every sidecar that asked for them: two jobs
// that each read the links and write them later could otherwise write
// an older reading over a newer one, and a sidecar's link would be lost
// for good.

// relinkTargets are the videos the sidecar at side (an NFO, a subtitle,
// an artwork image) belongs to, once it was added, changed, moved or
// removed: the videos in its folder of the same name (<video name>.nfo,
// <video name>.en.srt, <video name>-poster.jpg), every video in its
// folder (movie.nfo), every video in its folder and the two below
// (tvshow.nfo, a folder's artwork), the videos a Subs folder belongs to.
func (in *Ingester) relinkTargets(ctx context.Context, side string) []string {
	dir, base := filepath.Dir(side), strings.ToLower(filepath.Base(side))
	ext := filepath.Ext(base)
	maxDepth, named := 0, "" // named: the video's name the sidecar's begins with
	switch {
	case base == "tvshow.nfo":
		maxDepth = 2
	case base == "movie.nfo":
	case ext == ".nfo":
		named = strings.TrimSuffix(base, ext)
	case subtitleExts[ext]:
		switch {
		case slices.Contains(subsFolders, filepath.Base(dir)):
			dir = filepath.Dir(dir) // Subs/English.srt
		case slices.Contains(subsFolders, filepath.Base(filepath.Dir(dir))):
			dir, named = filepath.Dir(filepath.Dir(dir)), strings.ToLower(filepath.Base(dir)) // Subs/<video name>/2_English.srt
		default:
			named = "*" // <video name>.<lang>.srt: a name the video's begins
		}
	default: // artwork
		if prefix, _ := artName(strings.TrimSuffix(base, ext)); prefix != "" && !strings.HasPrefix(prefix, "season") {
			named = prefix
		} else {
			maxDepth = 2
		}
	}
	paths, err := retryGet(ctx, in, "list the videos of a sidecar", func() ([]string, error) { return in.st.PathsUnder(ctx, dir) })
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		depth := strings.Count(rel, string(filepath.Separator))
		low := strings.ToLower(strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))
		switch {
		case videoByExtension[strings.ToLower(filepath.Ext(p))] == "" || depth > maxDepth:
		case named == "*" && !strings.HasPrefix(base, low+"."):
		case named != "" && named != "*" && named != low:
		default:
			out = append(out, p)
		}
	}
	return out
}

// relinkOne writes the name, NFO and link fields of the video at p again,
// when it is a primary already extracted by the current extractors (an
// extraction still to come reads them itself). Only those fields
// (sidecarFields) are written: the video is not read, nor hashed. The
// caller holds p (a jobRelink).
func (in *Ingester) relinkOne(ctx context.Context, p string) {
	st, err := retryGet(ctx, in, "read path", func() (store.PathState, error) { return in.st.Path(ctx, p) })
	if err != nil || !st.Primary || st.Extracted < extractVersion {
		return
	}
	fields := map[string]string{}
	in.runExtractors(ctx, &Subject{Path: p, Library: in.libraryOf(p), Size: st.Size, FileType: "video"}, in.sidecarExtractors(), fields)
	in.addLinks(ctx, p, fields)
	meta := store.Meta{Version: extractVersion, Owned: sidecarFields, Fields: fields, Refresh: true}
	err = in.retry(ctx, "write metadata", func() error {
		_, _, err := in.st.SetExtracted(ctx, p, meta)
		return err
	})
	if err == nil {
		in.log.Debug("re-read a video's sidecars", "path", p)
	}
}

// sidecarExtractors are the configured extractors a relink runs: the
// name's and the NFOs'.
func (in *Ingester) sidecarExtractors() []Extractor {
	var exs []Extractor
	for _, ex := range in.cfg.Extractors {
		if ex.Name() == "filename" || ex.Name() == "nfo" {
			exs = append(exs, ex)
		}
	}
	return exs
}

// pathSet is a set of paths that several workers add to; take empties it.
type pathSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *pathSet) add(paths ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range paths {
		if s.m == nil {
			s.m = map[string]bool{}
		}
		s.m[p] = true
	}
}

func (s *pathSet) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for p := range s.m {
		out = append(out, p)
	}
	s.m = nil
	slices.Sort(out)
	return out
}
