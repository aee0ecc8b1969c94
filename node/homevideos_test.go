package node_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// TestHomeVideos_ByName: a camera's files and counted clips are listed
// as home videos by their names alone, never as films or a show, with
// the date their names hold.
func TestHomeVideos_ByName(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	names := []string{"DCIM/100APPLE/IMG_0042.MOV", "Phone/VID_20190314_181510.mp4", "clips/clip_0102.mp4",
		"clips/clip_0103.mp4", "clips/clip_1964.mp4", "GoPro/GOPR0123.MP4", "Films/Quiet.Harbour.2015.mkv"}
	for _, name := range names {
		data := make([]byte, 8<<10)
		rand.Read(data)
		writeOld(t, filepath.Join(lib, name), data)
	}
	n := startNodeWith(t, lib, nil)
	waiting.Until(t, "every video listed", func() string {
		if o, m := library(t, n, "view=other"), library(t, n, "view=movies"); o.Total != len(names)-1 || m.Total != 1 {
			return fmt.Sprintf("home videos %d, films %d", o.Total, m.Total)
		}
		return ""
	})
	if s := library(t, n, "view=shows"); s.Total != 0 {
		t.Errorf("shows made of home videos: %+v", s.Entries)
	}
	for _, e := range library(t, n, "view=other").Entries {
		if e.Year != 0 || e.Season != nil || e.Episode != nil {
			t.Errorf("a home video listed with a year or an episode: %+v", e)
		}
	}
	var doc map[string]any
	getJSON(t, n, "/api/meta/"+canonicalOf(t, filepath.Join(lib, "Phone/VID_20190314_181510.mp4")), &doc)
	if doc["recorded"] != "2019-03-14" || doc["videoType"] != "other" {
		t.Errorf("VID_20190314_181510: recorded %v, videoType %v", doc["recorded"], doc["videoType"])
	}
	// Search finds a home video by the day it was recorded.
	for _, q := range []string{"2019", "2019-03-14"} {
		waiting.Until(t, "search "+q+" to find the video of 2019-03-14", func() string {
			var res api.SearchResult
			getJSON(t, n, "/api/search?q="+q, &res)
			if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Title, "20190314") {
				return fmt.Sprintf("hits %+v", res.Hits)
			}
			return ""
		})
	}
}
