package store

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// catalogBatch is how many roots one catalog script reads: a batch is
// one round trip, and Redis serves other clients between batches.
const catalogBatch = 256

// catalogFields are the fields SummaryOfFields reads (a name ending in "/" for
// every field under it) but the IMDb ID, which the catalog's lists do
// not show; CatalogField reports them, so a write to any of them reaches
// the node's catalog, which reads the entry again.
var catalogFields = []string{"title", "titles/", "originalTitle", "filePath", "fileName", "movieYear", "year",
	"season", "episode", "episodeTitle", "sizeByte", "fileType", "videoType", "recorded", PosterField, StillField, FromNameField}

// ShowIMDbField is an episode's show's IMDb ID (a tvshow.nfo's), which
// the catalog keeps (Summary.ShowIMDbID).
const ShowIMDbField = "show/imdbid"

// PosterField links a file to its poster: the poster's CID (ingest's
// sidecars, an NFO's art).
const PosterField = "art/poster"

// StillField links a video to its still: the CID of a JPEG frame the
// node took from the video (node/stills), for a video with no poster.
// The node's own field: a household edit never sets or drops it
// (ValidEditField), and only SetStill writes it.
const StillField = "still"

// CatalogField reports whether field f of a root is read for its
// catalog entry (CatalogEntryOf): catalogFields, the IMDb ID and the
// sidecar kind (a Consumer's Fields; Changes hands a peer's claim,
// origin/<peer>/<field>, by its own name).
func CatalogField(f string) bool {
	if f == "imdbid" || f == ShowIMDbField || f == SidecarField {
		return true
	}
	for _, c := range catalogFields {
		if f == c || (strings.HasSuffix(c, "/") && strings.HasPrefix(f, c)) {
			return true
		}
	}
	return false
}

// posterOf is the CID of the image a list shows for d: its poster, else
// its still; "" for none.
func posterOf(d Document) string {
	f := d.Presented()
	if p := f[PosterField]; p != "" {
		return p
	}
	return f[StillField]
}

// CatalogEntries reads the summaries of roots, catalogBatch roots
// per script (one round trip each), reading only catalogFields of each
// (and their peers' claims), the key-set, the learned members and the
// peers: never a whole document. Roots that do not exist are left out.
// The answer follows the order of roots.
func (s *Store) CatalogEntries(ctx context.Context, roots []RootID) ([]Summary, error) {
	out := make([]Summary, 0, len(roots))
	err := s.readSummaries(ctx, roots, catalogFields, func(d Document) { out = append(out, CatalogEntryOf(d)) })
	return out, err
}

// readSummaries reads fields (and the key-set, learned members and
// peers) of roots, catalogBatch roots per script, and calls each with
// every root that exists, in the order of roots.
func (s *Store) readSummaries(ctx context.Context, roots []RootID, fields []string, each func(Document)) error {
	for i := 0; i < len(roots); i += catalogBatch {
		docs, err := luaCatalog.run(ctx, s, catalogArgs{roots: roots[i:min(i+catalogBatch, len(roots))], fields: fields})
		if err != nil {
			return err
		}
		for k := range docs {
			docs[k].friends = s.friends
		}
		for _, d := range docs {
			each(d)
		}
	}
	return nil
}

type catalogArgs struct {
	roots  []RootID
	fields []string
}

func (a catalogArgs) argv() []any {
	v := make([]any, 0, 1+len(a.roots)+len(a.fields))
	v = append(v, len(a.roots))
	for _, r := range a.roots {
		v = append(v, string(r))
	}
	for _, f := range a.fields {
		v = append(v, f)
	}
	return v
}

// decodeCatalog reads catalog.lua's reply as partial documents (the
// roots that exist, in order).
func decodeCatalog(c *redis.Cmd) ([]Document, error) {
	v, err := c.Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	strs := func(x any) []string {
		xs, _ := x.([]any)
		out := make([]string, 0, len(xs))
		for _, e := range xs {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	out := make([]Document, 0, len(v))
	for _, x := range v {
		t, ok := x.([]any)
		if !ok || len(t) < 5 {
			continue
		}
		r, _ := t[0].(string)
		d := Document{Root: RootID(r), CIDs: strs(t[1]), Peers: strs(t[3]), Fields: map[string]string{}}
		for _, m := range strs(t[2]) {
			if d.Learned == nil {
				d.Learned = map[string][]string{}
			}
			d.Learned[m] = nil
		}
		kv := strs(t[4])
		for i := 0; i+1 < len(kv); i += 2 {
			d.Fields[kv[i]] = kv[i+1]
		}
		if len(t) > 5 {
			d.Edited = strs(t[5])
			sort.Strings(d.Edited)
		}
		sort.Strings(d.CIDs)
		sort.Strings(d.Peers)
		out = append(out, d)
	}
	return out, nil
}

var luaCatalog = newScript[catalogArgs](luaRead, "catalog.lua", "read catalog", decodeCatalog)
