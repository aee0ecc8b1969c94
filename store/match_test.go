package store_test

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// Words match by prefix, one edit away and as NxMM episodes; leading
// articles do not count; sidecars are no hits; equals come out as a
// household reads them.
func TestSearch_Matching(t *testing.T) {
	s := storetest.New(t)
	ep := func(season, episode, title string) map[string]string {
		return map[string]string{"titles/eng": "Lighthouse Keepers", "season": season, "episode": episode, "episodeTitle": title}
	}
	// Ingested out of order: equals must not come out in ingestion order.
	addFile(t, s, "/lib/Keepers/Lighthouse.Keepers.S02E01.mkv", content{1, 1}, ep("2", "1", "Return"))
	addFile(t, s, "/lib/Keepers/Lighthouse.Keepers.S01E02.mkv", content{2, 2}, ep("1", "2", "Storm"))
	addFile(t, s, "/lib/Keepers/Lighthouse.Keepers.S01E01.mkv", content{3, 3}, ep("1", "1", "Pilot"))
	addFile(t, s, "/lib/Night.Train.1999.mkv", content{4, 4}, map[string]string{"titles/eng": "The Night Train", "movieYear": "1999"})
	addFile(t, s, "/lib/Night.Train.1999.en.srt", content{5, 5}, map[string]string{store.SidecarField: "subtitle"})
	addFile(t, s, "/lib/Lightning.2010.mkv", content{6, 6}, map[string]string{"titles/eng": "Lightning", "movieYear": "2010"})

	keepers := []string{"Lighthouse Keepers S01E01", "Lighthouse Keepers S01E02", "Lighthouse Keepers S02E01"}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		// Prefix: as the person types.
		{"li", append(append([]string{}, keepers...), "Lightning")},
		{"lighth", keepers},
		{"light keep", append(append([]string{}, keepers...), "Lightning", "The Night Train")},
		// One edit away, from five letters: a typo, a transposition.
		{"lighthuose", keepers},
		{"lightnig", []string{"Lightning"}},
		{"nigth train", []string{"The Night Train"}},
		// NxMM is the episode.
		{"keepers 1x02", []string{"Lighthouse Keepers S01E02", "Lighthouse Keepers S01E01", "Lighthouse Keepers S02E01"}},
		// A leading article is not a word of the title.
		{"the lighthouse keepers", keepers},
		{"a night train", []string{"The Night Train"}},
		// Exact before prefix: "train" is The Night Train's word, no prefix.
		{"night", []string{"The Night Train"}},
		// Sidecars are no hits: the subtitle's name holds "night" too.
		{"srt", nil},
	} {
		t.Run(tc.q, func(t *testing.T) {
			p, err := searchAt(t, s, tc.q, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range p.Hits {
				name := h.Title
				if h.Season != nil && h.Episode != nil {
					name += " S0" + string(rune('0'+*h.Season)) + "E0" + string(rune('0'+*h.Episode))
				}
				got = append(got, name)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Search(%q) = %q, want %q", tc.q, got, tc.want)
			}
		})
	}
}

// Exact matches rank before prefix and edit ones, all words before some.
func TestSearch_MatchTiers(t *testing.T) {
	s := storetest.New(t)
	addFile(t, s, "/lib/a.mkv", content{1, 1}, map[string]string{"titles/eng": "Harbour"})
	addFile(t, s, "/lib/b.mkv", content{2, 2}, map[string]string{"titles/eng": "Harbours"})
	addFile(t, s, "/lib/c.mkv", content{3, 3}, map[string]string{"titles/eng": "Harbor"})
	addFile(t, s, "/lib/d.mkv", content{4, 4}, map[string]string{"titles/eng": "Harbour Lights"})
	got := searchTitles(t, s, "harbour lights")
	want := []string{"Harbour Lights", "Harbour", "Harbours", "Harbor"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Search = %q, want %q", got, want)
	}
	// Alone, "harbour" holds its word exactly in two titles: those first.
	if got := searchTitles(t, s, "harbour"); !reflect.DeepEqual(got[:2], []string{"Harbour", "Harbour Lights"}) || len(got) != 4 {
		t.Errorf("Search(harbour) = %q", got)
	}
}

// A deleted root's words leave the index once it is indexed again.
func TestSearch_DeletedRootLeaves(t *testing.T) {
	s := storetest.New(t)
	r := addFile(t, s, "/lib/Zanzibar.mkv", content{1, 1}, map[string]string{"titles/eng": "Zanzibar"})
	if got := searchTitles(t, s, "zanz"); !reflect.DeepEqual(got, []string{"Zanzibar"}) {
		t.Fatalf("Search(zanz) = %q", got)
	}
	if err := s.DeleteRoot(ctx, r); err != nil {
		t.Fatal(err)
	}
	index(t, s, r)
	if p := must[searchPage](t)(searchAt(t, s, "zanz", 10, "")); p.Total != 0 || len(p.Hits) != 0 {
		t.Errorf("Search(zanz) after the delete = %+v", p)
	}
	mustCheck(t, s)
}
