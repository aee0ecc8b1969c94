package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gabriel-vasile/mimetype"

	"github.com/metamesh/node/store"
)

// Subject is the file an extractor looks at. MimeType and FileType are
// filled by the file-info extractor, which runs first.
type Subject struct {
	Path    string
	Library string // the library root that holds Path ("" when unknown)
	Size    int64
	// Head, when not nil, holds the file's first bytes (a small file read
	// whole): extractors that sniff content use it instead of reading.
	Head     []byte
	MimeType string
	FileType string // video, audio, image, text or other
	// ByName: no signature matched the bytes; MimeType and FileType come
	// from the file name's extension, so content readers skip the file.
	ByName bool
}

// Extractor reads metadata of one kind from a local file and returns flat
// fields (store.Flatten layout) to write under the file's root. It must not
// write to the file. Extract may be called from several goroutines at once.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, s *Subject) (map[string]string, error)
}

// DefaultExtractors are file-info, filename, nfo (whose fields win over
// the name's) and, when ffprobe is on PATH, ffprobe (otherwise one log
// line says it is skipped).
func DefaultExtractors(log *slog.Logger) []Extractor {
	ex := []Extractor{FileInfo{}, Filename{}, NFOReader{}}
	if f, err := NewFFprobe(); err == nil {
		ex = append(ex, f)
	} else {
		log.Info("ffprobe not found on PATH: media stream details are skipped (install ffmpeg to get them)")
	}
	return ex
}

// FileInfo detects the MIME type from magic bytes and classifies the file.
// Fields: fileType, mimeType (sizeByte is a schema field the store writes).
type FileInfo struct{}

// Name implements Extractor.
func (FileInfo) Name() string { return "file-info" }

// Extract implements Extractor.
func (FileInfo) Extract(_ context.Context, s *Subject) (map[string]string, error) {
	var m *mimetype.MIME
	if s.Head != nil {
		m = mimetype.Detect(s.Head)
	} else {
		var err error
		if m, err = mimetype.DetectFile(s.Path); err != nil {
			return nil, fmt.Errorf("detect mime type: %w", err)
		}
	}
	mt, _, _ := strings.Cut(m.String(), ";")
	if ext, ok := videoByExtension[strings.ToLower(filepath.Ext(s.Path))]; ok && mt == "application/octet-stream" {
		// Bytes no signature matches (a damaged or unusual container, a
		// partial rip) under a video file's name: the name still says
		// what the file is, so it is read as one.
		mt, s.ByName = ext, true
	}
	s.MimeType, s.FileType = mt, fileType(mt)
	return map[string]string{"mimeType": s.MimeType, "fileType": s.FileType}, nil
}

// videoByExtension maps the extensions of video files to their MIME type,
// for bytes whose container the detector does not recognise.
var videoByExtension = map[string]string{
	".mkv": "video/matroska", ".mk3d": "video/matroska", ".webm": "video/webm",
	".mp4": "video/mp4", ".m4v": "video/x-m4v", ".mov": "video/quicktime",
	".avi": "video/x-msvideo", ".divx": "video/x-msvideo", ".wmv": "video/x-ms-wmv",
	".mpg": "video/mpeg", ".mpeg": "video/mpeg", ".vob": "video/mpeg",
	".ts": "video/mp2t", ".m2ts": "video/mp2t", ".mts": "video/mp2t",
	".flv": "video/x-flv", ".ogv": "video/ogg", ".3gp": "video/3gpp",
}

func fileType(mime string) string {
	major, _, _ := strings.Cut(mime, "/")
	switch major {
	case "video", "audio", "image", "text":
		return major
	}
	switch mime {
	case "application/x-subrip", "application/json", "application/xml":
		return "text"
	case "application/vnd.rn-realmedia", "application/x-matroska":
		return "video"
	}
	return "other"
}

// extract writes the metadata of a primary path whose last extraction is
// older than the current extractors.
func (in *Ingester) extract(ctx context.Context, st store.PathState, path string, size int64) error {
	if !st.Primary || st.Extracted >= extractVersion {
		return nil
	}
	meta := in.meta(ctx, path, size, nil)
	return in.retry(ctx, "write metadata", func() error {
		_, _, err := in.st.SetExtracted(ctx, path, meta)
		return err
	})
}

// extractVersion is the version of what the extractors write; a primary
// path extracted with an older one is extracted again on the next scan
// (no re-hashing). Bump it whenever an extractor changes its output.
const extractVersion = NameParserVersion + 4 // +1: a video file's name decides when its bytes are not recognised; +1: NFO files; +1: sidecars say they are one; +1: which fields the name alone gave

// extractedFields are the field names and prefixes the default
// extractors write: a re-extraction drops what they no longer find, and
// leaves every other field alone.
var extractedFields = []string{"mimeType", "fileType", "titles/eng", "titles/rom", "titles/jpn", "anime", "originalTitle", "movieYear", "season", "episode",
	"episodeTitle", "videoType", "release", "episodes", "releasedate", "recorded", "fileinfo",
	"plot/" + NFOLanguage, "genre", "rating", "mpaa", "imdbid", "tmdbid", "tvdbid", "show", "subtitles", "subtitleflags", "art",
	store.SidecarField, store.FromNameField}

// sidecarFields are what the name and NFO extractors and the sidecar links
// write: what a change of a sidecar re-extracts (relink), leaving the
// content's fields alone.
var sidecarFields = slices.DeleteFunc(slices.Clone(extractedFields), func(f string) bool {
	return f == "mimeType" || f == "fileType" || f == "fileinfo" || f == store.SidecarField
})

// meta runs the extractors on a local file; head, when not nil, is the
// file's content already in memory.
func (in *Ingester) meta(ctx context.Context, path string, size int64, head []byte) store.Meta {
	subj := &Subject{Path: path, Library: in.libraryOf(path), Size: size, Head: head}
	fields := map[string]string{}
	in.runExtractors(ctx, subj, in.cfg.Extractors, fields)
	if fields["videoType"] != "" { // Filename writes it for every video
		in.addLinks(ctx, path, fields)
	}
	if kind := sidecarKind(path); kind != "" {
		// Found through its video's hit, never a search hit of its own.
		fields[store.SidecarField] = kind
	}
	return store.Meta{Version: extractVersion, Owned: extractedFields, Fields: fields}
}

// addLinks adds a video's sidecar links (sidecars.go) to its fields.
func (in *Ingester) addLinks(ctx context.Context, path string, fields map[string]string) {
	season := -1
	if n, err := strconv.Atoi(fields["season"]); err == nil {
		season = n
	}
	for k, v := range in.sidecarLinks(ctx, path, season) {
		fields[k] = v
	}
}

// runExtractors runs exs on subj in order into fields, a later one's
// value winning. An extractor's error is logged; what it returned beside
// the error is still used (an NFO that cannot be read next to one that
// can).
func (in *Ingester) runExtractors(ctx context.Context, subj *Subject, exs []Extractor, fields map[string]string) {
	byName := map[string]bool{}
	for _, ex := range exs {
		out, err := ex.Extract(ctx, subj)
		if err != nil {
			in.log.Warn("extractor failed", "extractor", ex.Name(), "path", subj.Path, "err", err)
		}
		_, named := ex.(Filename)
		for k, v := range out {
			if store.ValidField(k) == nil {
				fields[k] = v
				byName[k] = named
			}
		}
	}
	// Which of the fields a peer may know better came from the file's
	// name alone (store.FromNameField): a guess, where an NFO is a word.
	var guessed []string
	for k, named := range byName {
		if named && store.Fillable(k) {
			guessed = append(guessed, k)
		}
	}
	if len(guessed) > 0 {
		slices.Sort(guessed)
		fields[store.FromNameField] = strings.Join(guessed, " ")
	}
}
