package ingest_test

import (
	"context"
	"testing"

	"github.com/metamesh/node/ingest"
)

func TestRelease_Fields(t *testing.T) {
	tests := []struct {
		path string
		want map[string]string // "" means absent
	}{
		{"Show - 1x05 - Pilot.avi", map[string]string{"titles/eng": "Show", "originalTitle": "Show", "season": "1",
			"episode": "5", "videoType": "episode", "episodeTitle": "Pilot", "movieYear": "", "episodes/0": ""}},
		{"Inception (2010).mkv", map[string]string{"titles/eng": "Inception", "movieYear": "2010", "videoType": "movie",
			"season": "", "episode": ""}},
		{"Show.S01E01E02.720p.HDTV.x264-GRP.mkv", map[string]string{"episode": "1", "episodes/0": "1", "episodes/1": "2",
			"episodes/2": "", "release/resolution": "720p", "release/source": "HDTV", "release/videoCodec": "H.264",
			"release/group": "GRP"}},
		{"Movie.2001.MULTi.FRENCH.EXTENDED.DTS.CD2.avi", map[string]string{"release/languages/0": "mul",
			"release/languages/1": "fre", "release/languages/2": "", "release/edition": "Extended",
			"release/audioCodec": "DTS", "release/cd": "2", "release/part": ""}},
		{"Show.2013.10.21.mkv", map[string]string{"releasedate": "2013-10-21", "videoType": "episode", "season": ""}},
		{"[Group] Show - 12 [1080p].mkv", map[string]string{"episode": "12", "season": "", "release/group": "Group"}},
		{"Holiday.mp4", map[string]string{"titles/eng": "Holiday", "videoType": "unknown", "movieYear": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := ingest.ParseReleaseName(tt.path).Fields()
			for _, m := range mismatches(got, tt.want) {
				t.Error(m)
			}
		})
	}
}

func TestFilename_Extract(t *testing.T) {
	tests := []struct {
		name    string
		subject ingest.Subject
		want    map[string]string // nil: no fields at all
	}{
		{"library root known", ingest.Subject{Path: "/srv/media/Show/Season 2/05 - Title.mkv", Library: "/srv/media",
			FileType: "video"}, map[string]string{"titles/eng": "Show", "season": "2", "episode": "5"}},
		{"library root with trailing slash", ingest.Subject{Path: "/srv/lib/Heat (1995)/heat.mkv", Library: "/srv/lib/",
			FileType: "video"}, map[string]string{"titles/eng": "Heat", "movieYear": "1995"}}, // the folder's casing
		{"library root unknown: parent folders", ingest.Subject{Path: "/home/u/Movies/Heat (1995)/Heat.mkv",
			FileType: "video"}, map[string]string{"titles/eng": "Heat", "movieYear": "1995"}},
		{"library root unknown: at most three folders", ingest.Subject{Path: "/x/Old Title (1990)/a/b/c/Clip.mkv",
			FileType: "video"}, map[string]string{"titles/eng": "Clip", "movieYear": ""}},
		{"folders above the library are not read", ingest.Subject{Path: "/lib/Old Title (1990)/lib2/Clip.mkv",
			Library: "/lib/Old Title (1990)/lib2", FileType: "video"}, map[string]string{"titles/eng": "Clip", "movieYear": ""}},
		{"not a video", ingest.Subject{Path: "/lib/Show.S01E01.srt", Library: "/lib", FileType: "text"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ingest.Filename{}.Extract(context.Background(), &tt.subject)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if got != nil {
					t.Errorf("got %v, want no fields", got)
				}
				return
			}
			for _, m := range mismatches(got, tt.want) {
				t.Error(m)
			}
		})
	}
}

func TestNameParserVersion(t *testing.T) {
	if ingest.NameParserVersion < 2 {
		t.Errorf("NameParserVersion = %d, want 2 or more", ingest.NameParserVersion)
	}
}
