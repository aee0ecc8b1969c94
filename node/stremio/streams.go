package stremio

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/metamesh/node/store"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// streamRequest answers stream/<type>/<id>.json: every file of the
// household that holds the film or the episode; none (an empty list,
// as the protocol answers an item an add-on does not have) for an IMDb
// ID it holds nothing of, since Stremio asks every add-on of the tt
// prefix for the items of other catalogs.
func (a *Addon) streamRequest(w http.ResponseWriter, r *http.Request, typ, raw string) {
	id, err := unescapeID(raw)
	switch {
	case err != nil:
	case typ == TypeMovie && (id.Show != "" || id.Episode):
		err = errorf("ID %s is a show's or an episode's: ask stream/series", id)
	case typ == TypeSeries && (id.CID != "" || !id.Episode):
		err = errorf("ID %s names no episode: a series' streams are asked for by <show>:<season>:<episode>", id)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var files []store.Summary
	if typ == TypeMovie {
		files = a.cat.Film(id.IMDb + id.CID)
	} else {
		show := id
		show.Episode, show.Season, show.Number = false, 0, 0
		if s, ok := a.show(show); ok {
			for _, e := range s.List {
				if *e.Season == id.Season && *e.Episode == id.Number {
					files = append(files, e)
				}
			}
		}
	}
	out := StreamAnswer{Streams: []Stream{}}
	if len(files) == 0 {
		writeJSON(w, http.StatusOK, out)
		return
	}
	roots := make([]store.RootID, len(files))
	for i, f := range files {
		roots[i] = f.Root
	}
	fs, err := a.src.Fields(r.Context(), roots)
	if err != nil {
		failed(w, "read the files", err)
		return
	}
	base := a.base(r)
	for i, f := range files {
		if fs[i] != nil {
			out.Streams = append(out.Streams, a.streamsOf(base, f, fs[i])...)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// streamsOf lists the ways to play one file of the household: the one
// place that says which URLs of the node play a file. Its bytes as they
// are (file/<cid>, GET /api/file with the path's token), and, for a
// file a browser cannot play as it is, the node's conversion of it
// (converted/<cid>, GET /api/stream: fragmented MP4 of H.264 and AAC,
// what of the file a browser decodes copied), which Stremio's web app
// plays where the file itself would not.
func (a *Addon) streamsOf(base string, f store.Summary, fields map[string]string) []Stream {
	name := path.Base(fields["filePath"])
	desc := name
	if res := resolution(fields); res != "" {
		desc += "\n" + res
	}
	if f.Size > 0 {
		desc += fmt.Sprintf("\n%.1f GB", float64(f.Size)/1e9)
	}
	ready := webReady(name, fields)
	out := []Stream{{
		URL:  base + "/file/" + url.PathEscape(f.CID),
		Name: a.label(), Title: desc, Description: desc,
		BehaviorHints: StreamHints{NotWebReady: !ready, BingeGroup: a.id() + "|file",
			Filename: name, VideoSize: f.Size},
	}}
	if !ready {
		q := url.Values{}
		if webCodec(fields["fileinfo/streamdetails/video/0/codec"], "h264", "avc", "avc1") {
			q.Set("video", "1")
		}
		if webCodec(fields["fileinfo/streamdetails/audio/0/codec"], "aac", "mp3", "opus") {
			q.Set("audio", "1")
		}
		conv := desc + "\nconverted for browsers (H.264, AAC)"
		out = append(out, Stream{
			URL:  base + "/converted/" + url.PathEscape(f.CID) + "?" + q.Encode(),
			Name: a.label(), Title: conv, Description: conv,
			BehaviorHints: StreamHints{BingeGroup: a.id() + "|converted", Filename: strings.TrimSuffix(name, path.Ext(name)) + ".mp4"},
		})
	}
	return out
}

// webCodec reports a codec name, as ffprobe gives it, among those a
// browser decodes in MP4.
func webCodec(codec string, ok ...string) bool {
	return slices.Contains(ok, strings.ToLower(codec))
}

// label names the node in Stremio's list of streams.
func (a *Addon) label() string {
	if a.cfg.Name != "" {
		return "MetaMesh\n" + a.cfg.Name
	}
	return "MetaMesh"
}

// resolution is a video's height as a media centre says it (1080p).
func resolution(f map[string]string) string {
	if h := f["fileinfo/streamdetails/video/0/height"]; h != "" {
		return h + "p"
	}
	return ""
}

// webReady reports a file a browser plays as it is: an MP4 or a WebM
// whose codecs (when its fields name them) browsers decode.
func webReady(name string, f map[string]string) bool {
	video := strings.ToLower(f["fileinfo/streamdetails/video/0/codec"])
	audio := strings.ToLower(f["fileinfo/streamdetails/audio/0/codec"])
	var videoOK, audioOK []string
	switch strings.ToLower(path.Ext(name)) {
	case ".mp4", ".m4v":
		videoOK, audioOK = []string{"h264", "avc", "avc1", "av1", "vp9"}, []string{"aac", "mp3", "opus", "flac"}
	case ".webm":
		videoOK, audioOK = []string{"vp8", "vp9", "av1"}, []string{"opus", "vorbis"}
	default:
		return false
	}
	return (video == "" || slices.Contains(videoOK, video)) && (audio == "" || slices.Contains(audioOK, audio))
}
