package ingest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/store/storetest"
)

// makeMedia renders a one-second clip with a video, an English audio and
// an English subtitle stream with the real ffmpeg.
func makeMedia(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is not installed (sudo apt-get install ffmpeg); make test installs it")
	}
	srt := filepath.Join(dir, "sub.srt")
	if err := os.WriteFile(srt, []byte("1\n00:00:00,000 --> 00:00:00,900\nHello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "Clip.Name.2021.mkv")
	cmd := exec.Command("ffmpeg", "-v", "error", "-y",
		"-f", "lavfi", "-i", "testsrc=duration=1:size=320x240:rate=10",
		"-f", "lavfi", "-i", "sine=frequency=440:duration=1",
		"-i", srt,
		"-map", "0", "-map", "1", "-map", "2",
		"-c:v", "mpeg4", "-c:a", "aac", "-ac", "2", "-c:s", "srt",
		"-metadata:s:a:0", "language=eng", "-metadata:s:s:0", "language=eng",
		out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	return out
}

func TestFFprobe_Extract(t *testing.T) {
	dir := t.TempDir()
	media := makeMedia(t, dir)
	ff, err := ingest.NewFFprobe()
	if err != nil {
		t.Fatalf("ffprobe not found: %v", err)
	}
	subj := &ingest.Subject{Path: media}
	if _, err := (ingest.FileInfo{}).Extract(context.Background(), subj); err != nil {
		t.Fatal(err)
	}
	if subj.FileType != "video" || subj.MimeType != "video/matroska" {
		t.Fatalf("file-info: %+v", subj)
	}
	got, err := ff.Extract(context.Background(), subj)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fileinfo/formatName":                        "matroska,webm",
		"fileinfo/streamdetails/video/0/codec":       "mpeg4",
		"fileinfo/streamdetails/video/0/width":       "320",
		"fileinfo/streamdetails/video/0/height":      "240",
		"fileinfo/streamdetails/audio/0/codec":       "aac",
		"fileinfo/streamdetails/audio/0/language":    "eng",
		"fileinfo/streamdetails/audio/0/channels":    "2",
		"fileinfo/streamdetails/subtitle/0/language": "eng",
		"fileinfo/streamdetails/subtitle/0/format":   "subrip",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got["fileinfo/duration"] == "" {
		t.Error("no duration")
	}
	// Not media: nothing to say.
	txt := &ingest.Subject{Path: media, FileType: "text"}
	if out, err := ff.Extract(context.Background(), txt); err != nil || out != nil {
		t.Errorf("text file: %v %v", out, err)
	}
}

func TestScan_ExtractsMediaMetadata(t *testing.T) {
	s := storetest.New(t)
	l := newLib(t)
	makeMedia(t, l.dir)
	os.Remove(l.path("sub.srt"))
	cfg := testConfig(l)
	cfg.Extractors = nil // the defaults, ffprobe included
	if _, err := ingest.Scan(bg, s, cfg, 0, nil); err != nil {
		t.Fatal(err)
	}
	_, doc := docOf(t, s, l.path("Clip.Name.2021.mkv"))
	for k, v := range map[string]string{
		"fileType": "video", "mimeType": "video/matroska", "titles/eng": "Clip Name", "movieYear": "2021",
		"videoType": "movie", "fileinfo/streamdetails/video/0/width": "320",
	} {
		if doc.Fields[k] != v {
			t.Errorf("%s = %q, want %q", k, doc.Fields[k], v)
		}
	}
	n := model.NestMeta(doc.Presented(), nil)
	video := n["fileinfo"].Object["streamdetails"].Object["video"].List
	if len(video) == 0 || video[0].Object["codec"].Str != "mpeg4" {
		t.Errorf("nested video = %v", video)
	}
}

// Bytes no signature matches under a video name are a video by name only:
// ffprobe is not asked (it could only fail on them).
func TestFFprobe_SkipsVideoByNameOnly(t *testing.T) {
	ff, err := ingest.NewFFprobe()
	if err != nil {
		t.Fatalf("ffprobe not found: %v", err)
	}
	p := filepath.Join(t.TempDir(), "Damaged.Film.2010.mkv")
	if err := os.WriteFile(p, bytes.Repeat([]byte{0x5a, 0x17}, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	subj := &ingest.Subject{Path: p}
	if _, err := (ingest.FileInfo{}).Extract(context.Background(), subj); err != nil {
		t.Fatal(err)
	}
	if subj.FileType != "video" || !subj.ByName {
		t.Fatalf("file-info: %+v, want a video by name", subj)
	}
	if got, err := ff.Extract(context.Background(), subj); err != nil || got != nil {
		t.Errorf("ffprobe on a video by name only: %v, %v; want nothing and no error", got, err)
	}
}
