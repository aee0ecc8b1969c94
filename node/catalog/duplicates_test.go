package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store"
)

// doc is a local file's document: its path, size and fields (name=value
// pairs), one CID named after the root.
func doc(root, path string, size int, fields ...string) store.Changed {
	f := map[string]string{"filePath": path, "sizeByte": fmt.Sprint(size), "fileType": "video"}
	for _, kv := range fields {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	d := store.Document{Root: store.RootID(root), CIDs: []string{"bafk" + root}, Fields: f}
	return store.Changed{Root: d.Root, Exists: true, Document: d}
}

// summary writes a page's groups as text: each group's key, count, size
// and wasted bytes, then its copies' CIDs and paths.
func summary(p model.DuplicatesPage) string {
	var b strings.Builder
	for _, g := range p.Groups {
		fmt.Fprintf(&b, "%s n=%d size=%d wasted=%d:", g.Key, g.Count, g.Size, g.Wasted)
		for _, c := range g.Copies {
			fmt.Fprintf(&b, " %s@%s", c.CID, c.Path)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestCatalog_Duplicates(t *testing.T) {
	library := []store.Changed{
		doc("a", "/m/Quiet.Harbour.2015.1080p.mkv", 300, "titles/eng=Quiet Harbour", "movieYear=2015",
			"fileinfo/streamdetails/video/0/codec=h264", "fileinfo/streamdetails/video/0/width=1920",
			"fileinfo/streamdetails/video/0/height=1080", "fileinfo/streamdetails/audio/0/codec=aac", "fileinfo/duration=5400.4"),
		doc("b", "/m/Quiet Harbour (2015)/Quiet Harbour.720p.mkv", 200, "titles/eng=Quiet harbour", "movieYear=2015",
			"release/resolution=720p", "release/videoCodec=H.265"),
		// The same film by its IMDb ID under another title, and one that
		// shares that ID's group through its title.
		doc("c", "/m/Stille Hafen.mkv", 100, "titles/eng=Stille Hafen", "movieYear=2015", "imdbid=tt01"),
		doc("d", "/m/Quiet Harbour 2015.avi", 50, "titles/eng=Quiet Harbour", "movieYear=2015", "imdbid=tt01"),
		// Another year is another film.
		doc("e", "/m/Quiet Harbour 1990.mkv", 10, "titles/eng=Quiet Harbour", "movieYear=1990"),
		// One episode in two encodes; its next episode once.
		doc("f", "/tv/Show.S01E02.mkv", 40, "titles/eng=The Show", "season=1", "episode=2"),
		doc("g", "/tv/The Show/Season 1/02.mkv", 30, "titles/eng=the show", "season=1", "episode=2"),
		doc("h", "/tv/Show.S01E03.mkv", 30, "titles/eng=The Show", "season=1", "episode=3"),
		// One file under three paths.
		func() store.Changed {
			c := doc("i", "/m/Alone.mkv", 70, "titles/eng=Alone")
			c.Document.Duplicates, c.Document.DuplicateCount = []string{"/n/Alone copy.mkv", "/n/Alone.mkv"}, 2
			return c
		}(),
		// A poster under two paths is one file held twice; a sidecar and a
		// peer's file of the same film are not copies of the film.
		func() store.Changed {
			c := doc("l", "/m/poster.jpg", 5, "fileType=image")
			c.Document.Duplicates, c.Document.DuplicateCount = []string{"/n/poster.jpg"}, 1
			return c
		}(),
		doc("j", "/m/Quiet.Harbour.2015.srt", 1, "titles/eng=Quiet Harbour", "movieYear=2015", "fileType=subtitle"),
		func() store.Changed {
			c := doc("k", "", 999, "titles/eng=Quiet Harbour", "movieYear=2015")
			delete(c.Document.Fields, "filePath")
			c.Document.Peers = []string{"12D3KooWpeer"}
			return c
		}(),
	}
	c := New()
	if err := c.Take(context.Background(), store.ChangeBatch{Roots: library, Sweep: true, First: true, Last: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		q           model.DuplicatesQuery
		want        string
		total       int
		wasted      int64
		pages, page int
	}{
		{
			name: "by title", q: model.DuplicatesQuery{By: model.DuplicatesByTitle, Page: 1, Limit: 10}, total: 2, wasted: 350 + 30,
			want: "film:quiet harbour|2015 n=4 size=650 wasted=350: bafka@/m/Quiet.Harbour.2015.1080p.mkv bafkb@/m/Quiet Harbour (2015)/Quiet Harbour.720p.mkv bafkc@/m/Stille Hafen.mkv bafkd@/m/Quiet Harbour 2015.avi\n" +
				"episode:the show|1|2 n=2 size=70 wasted=30: bafkf@/tv/Show.S01E02.mkv bafkg@/tv/The Show/Season 1/02.mkv\n",
		},
		{
			name: "by title, second page", q: model.DuplicatesQuery{By: model.DuplicatesByTitle, Page: 2, Limit: 1}, total: 2, wasted: 380,
			want: "episode:the show|1|2 n=2 size=70 wasted=30: bafkf@/tv/Show.S01E02.mkv bafkg@/tv/The Show/Season 1/02.mkv\n",
		},
		{
			name: "by title, past the last page", q: model.DuplicatesQuery{By: model.DuplicatesByTitle, Page: 3, Limit: 1}, total: 2, wasted: 380,
		},
		{
			name: "by content", q: model.DuplicatesQuery{By: model.DuplicatesByContent, Page: 1, Limit: 10}, total: 2, wasted: 145,
			want: "bafki n=3 size=210 wasted=140: bafki@/m/Alone.mkv bafki@/n/Alone copy.mkv bafki@/n/Alone.mkv\n" +
				"bafkl n=2 size=10 wasted=5: bafkl@/m/poster.jpg bafkl@/n/poster.jpg\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.Duplicates(tc.q)
			if got := summary(p); got != tc.want {
				t.Errorf("groups:\n%s\nwant:\n%s", got, tc.want)
			}
			if p.Total != tc.total || p.Wasted != tc.wasted || p.Pages != (tc.total+tc.q.Limit-1)/tc.q.Limit || !p.Loaded || p.Groups == nil {
				t.Errorf("total %d wasted %d pages %d loaded %v, want %d %d", p.Total, p.Wasted, p.Pages, p.Loaded, tc.total, tc.wasted)
			}
		})
	}

	t.Run("encoding side by side", func(t *testing.T) {
		cs := c.Duplicates(model.DuplicatesQuery{By: model.DuplicatesByTitle, Page: 1, Limit: 1}).Groups[0].Copies
		got := []model.DuplicateCopy{cs[0], cs[1]}
		want := []model.DuplicateCopy{
			{CID: "bafka", Path: "/m/Quiet.Harbour.2015.1080p.mkv", Size: 300, Resolution: "1920x1080", VideoCodec: "h264", AudioCodec: "aac", Runtime: 5400},
			{CID: "bafkb", Path: "/m/Quiet Harbour (2015)/Quiet Harbour.720p.mkv", Size: 200, Resolution: "720p", VideoCodec: "H.265"},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("copies %+v, want %+v", got, want)
		}
	})

	// A change is seen by the next answer: the second encode of the
	// episode deleted, its group is gone; a title written anew moves a
	// file into a group.
	t.Run("changes", func(t *testing.T) {
		e := doc("e", "/m/Quiet Harbour 1990.mkv", 10, "titles/eng=Quiet Harbour", "movieYear=2015")
		if err := c.Take(context.Background(), store.ChangeBatch{Roots: []store.Changed{{Root: "g"}, e}}); err != nil {
			t.Fatal(err)
		}
		got := summary(c.Duplicates(model.DuplicatesQuery{By: model.DuplicatesByTitle, Page: 1, Limit: 10}))
		want := "film:quiet harbour|2015 n=5 size=660 wasted=360: bafka@/m/Quiet.Harbour.2015.1080p.mkv bafkb@/m/Quiet Harbour (2015)/Quiet Harbour.720p.mkv bafkc@/m/Stille Hafen.mkv bafkd@/m/Quiet Harbour 2015.avi bafke@/m/Quiet Harbour 1990.mkv\n"
		if got != want {
			t.Errorf("groups:\n%s\nwant:\n%s", got, want)
		}
	})
}
