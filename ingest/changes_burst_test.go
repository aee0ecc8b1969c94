package ingest

import "testing"

// TestChangeLog_VideosNamedFirst: a burst's line names its videos before
// the sidecars that came with them.
func TestChangeLog_VideosNamedFirst(t *testing.T) {
	var c changeLog
	for _, n := range []string{"Film/poster.jpg", "Film/movie.nfo", "Film/a.en.srt", "Film/a.mkv", "b.MP4", "c.webm", "d.mkv", "e.nfo"} {
		c.add("added", "/lib", n)
	}
	g := c.take()
	if len(g) != 1 {
		t.Fatalf("groups = %d, want 1", len(g))
	}
	if got, want := g[0].line(), "added 8 files: Film/a.mkv, b.MP4, c.webm, …"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}
