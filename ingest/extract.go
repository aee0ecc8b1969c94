package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gabriel-vasile/mimetype"
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
}

// Extractor reads metadata of one kind from a local file and returns flat
// fields (store.Flatten layout) to write under the file's root. It must not
// write to the file. Extract may be called from several goroutines at once.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, s *Subject) (map[string]string, error)
}

// DefaultExtractors are file-info, filename and, when ffprobe is on PATH,
// ffprobe (otherwise one log line says it is skipped).
func DefaultExtractors(log *slog.Logger) []Extractor {
	ex := []Extractor{FileInfo{}, Filename{}}
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
	s.MimeType, s.FileType = mt, fileType(mt)
	return map[string]string{"mimeType": s.MimeType, "fileType": s.FileType}, nil
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
