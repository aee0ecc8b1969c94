package store_test

import (
	"maps"
	"testing"

	"github.com/metamesh/node/store"
)

// TestDocument_Shown: what peers fill in on a local file, and what they
// never replace.
func TestDocument_Shown(t *testing.T) {
	const a, c, h = "12D3KooWA", "12D3KooWC", "12D3KooWH"
	local := func(kv ...string) map[string]string {
		m := map[string]string{"filePath": "/lib/qh.mkv", "sizeByte": "10"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		fields   map[string]string
		edited   []string
		friend   string            // the household's friend, "" for none
		want     map[string]string // fields shown that differ from Fields, "" for absent
		wantFrom map[string]string
	}{
		{"a peer fills in what the household has none of",
			local("origin/"+a+"/plot/eng", "A lighthouse.", "origin/"+a+"/imdbid", "tt0000001", "origin/"+a+"/art/poster", "bafyposter", "origin/"+a+"/season", "3"),
			nil, "",
			map[string]string{"plot/eng": "A lighthouse.", "imdbid": "tt0000001", "art/poster": "bafyposter", "season": ""},
			map[string]string{"plot/eng": a, "imdbid": a, "art/poster": a}},
		{"a peer's word beats the name's guess",
			local("titles/eng", "qh", "fromName", "titles/eng", "origin/"+a+"/titles/eng", "Quiet Harbour"),
			nil, "",
			map[string]string{"titles/eng": "Quiet Harbour"},
			map[string]string{"titles/eng": a}},
		{"a peer's guess does not beat the household's",
			local("titles/eng", "qh", "fromName", "titles/eng", "origin/"+a+"/titles/eng", "Quiet", "origin/"+a+"/fromName", "titles/eng"),
			nil, "",
			map[string]string{},
			map[string]string{"titles/eng": store.FromName}},
		{"the household's NFO wins",
			local("titles/eng", "Harbour", "origin/"+a+"/titles/eng", "Quiet Harbour"),
			nil, "",
			map[string]string{},
			map[string]string{"titles/eng": store.FromOwn}},
		{"the household's edit wins, even over a name's field list",
			local("titles/eng", "Mine", "fromName", "titles/eng", "origin/"+a+"/titles/eng", "Quiet Harbour"),
			[]string{"titles/eng"}, "",
			map[string]string{},
			map[string]string{"titles/eng": store.FromEdit}},
		{"two households agree against a third",
			local("origin/"+a+"/titles/eng", "Quiet Harbour", "origin/"+c+"/titles/eng", "Quiet Harbour", "origin/"+h+"/titles/eng", "Forged"),
			nil, "",
			map[string]string{"titles/eng": "Quiet Harbour"},
			map[string]string{"titles/eng": a}},
		{"a tie goes to the smallest peer ID",
			local("origin/"+c+"/movieYear", "2015", "origin/"+h+"/movieYear", "2016"),
			nil, "",
			map[string]string{"movieYear": "2015"},
			map[string]string{"movieYear": c}},
		{"a tie goes to a friend, then to the smallest peer ID",
			local("origin/"+c+"/movieYear", "2015", "origin/"+h+"/movieYear", "2016", "origin/"+a+"/imdbid", "tt1", "origin/"+c+"/imdbid", "tt1", "origin/"+h+"/imdbid", "tt2"),
			nil, h,
			map[string]string{"movieYear": "2016", "imdbid": "tt1"},
			map[string]string{"movieYear": h, "imdbid": a}},
		{"a list is one value: one peer's items, whole",
			local("origin/"+a+"/genre/0", "Drama", "origin/"+a+"/genre/1", "Crime", "origin/"+c+"/genre/0", "Drama", "origin/"+c+"/genre/1", "Crime",
				"origin/"+h+"/genre/0", "Comedy", "origin/"+h+"/genre/1", "Crime", "origin/"+h+"/genre/2", "Horror"),
			nil, "",
			map[string]string{"genre/0": "Drama", "genre/1": "Crime", "genre/2": ""},
			map[string]string{"genre": a}},
		{"nothing to fill in", local("titles/eng", "Heat"), nil, "", map[string]string{}, map[string]string{"titles/eng": store.FromOwn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := store.Document{Fields: tt.fields, Edited: tt.edited}
			if tt.friend != "" {
				d = d.WithFriends(func(p string) bool { return p == tt.friend })
			}
			got, from := d.Shown()
			want := maps.Clone(tt.fields)
			for f, v := range tt.want {
				if v == "" {
					delete(want, f)
				} else {
					want[f] = v
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("shown %v, want %v", got, want)
			}
			if !maps.Equal(from, tt.wantFrom) {
				t.Errorf("from %v, want %v", from, tt.wantFrom)
			}
			if p := d.Presented(); !maps.Equal(p, got) {
				t.Errorf("Presented %v, want what Shown shows", p)
			}
		})
	}
}
