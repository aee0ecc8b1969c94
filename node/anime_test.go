package node_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// TestNames_AnimeAndCountries: on a real node, a fansub group's anime
// numbered from its first episode, one named in Japanese script and the
// American and British shows of one name are each one show in the
// library, the anime's episodes in season 1; an anime's document carries
// its mark, its titles by script and its CRC, and search finds it.
func TestNames_AnimeAndCountries(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	writeLibrary(t, lib,
		"Anime/Frieren/[SubsPlease] Sousou no Frieren - 01 (1080p) [ABCD1234].mkv",
		"Anime/Frieren/[SubsPlease] Sousou no Frieren - 02 (1080p) [1A2B3C4D].mkv",
		"[Judas] Oshi no Ko 2nd Season - 03 [1080p].mkv",
		"進撃の巨人 第01話.mkv", "進撃の巨人 第02話 「その日」.mkv",
		"TV/The Office (US)/Season 2/The.Office.US.S02E01.720p.mkv",
		"TV/The Office UK/Series 1/The.Office.UK.S01E01.DVDRip.avi")
	n := startNodeWith(t, lib, nil)
	want := []string{
		"Oshi no Ko: 1 seasons, 1 episodes",
		"Sousou no Frieren: 1 seasons, 2 episodes",
		"The Office (UK): 1 seasons, 1 episodes",
		"The Office (US): 1 seasons, 1 episodes",
		"進撃の巨人: 1 seasons, 2 episodes",
	}
	waiting.Until(t, "the shows listed", func() string {
		if got := lines(library(t, n, "view=shows")); !slices.Equal(got, want) {
			return fmt.Sprintf("shows %q, want %q", got, want)
		}
		return ""
	})
	if got := lines(library(t, n, "show=sousou+no+frieren&season=1")); !slices.Equal(got, []string{"Sousou no Frieren S01E01", "Sousou no Frieren S01E02"}) {
		t.Errorf("Frieren's season 1: %q", got)
	}
	if got := lines(library(t, n, "show=oshi+no+ko&season=2")); !slices.Equal(got, []string{"Oshi no Ko S02E03"}) {
		t.Errorf("Oshi no Ko's season 2: %q", got)
	}
	if got := lines(library(t, n, "view=movies")); len(got) != 0 {
		t.Errorf("films made of episodes: %q", got)
	}

	for file, want := range map[string]map[string]string{
		"Anime/Frieren/[SubsPlease] Sousou no Frieren - 01 (1080p) [ABCD1234].mkv": {"anime": "true", "titles/rom": "Sousou no Frieren",
			"release/crc32": "ABCD1234", "release/group": "SubsPlease", "titles/eng": ""},
		"進撃の巨人 第02話 「その日」.mkv": {"anime": "true", "titles/jpn": "進撃の巨人", "episode": "2", "episodeTitle": "その日"},
	} {
		_, body := do(t, n, "GET", "/api/meta/"+canonicalOf(t, filepath.Join(lib, file)), nil)
		for k, v := range want {
			if got, ok := field(t, body, k); got != v && (ok || v != "") {
				t.Errorf("%s: %s = %q, want %q", file, k, got, v)
			}
		}
	}
	for _, q := range []string{"frieren", "進撃の巨人"} {
		waiting.Until(t, "search "+q+" to find both episodes", func() string {
			var res api.SearchResult
			getJSON(t, n, "/api/search?q="+url.QueryEscape(q), &res)
			if len(res.Hits) < 2 {
				return fmt.Sprintf("hits %+v", res.Hits)
			}
			return ""
		})
	}
}
