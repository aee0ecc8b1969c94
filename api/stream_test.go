package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// fakeStreamer is a Backend that makes streams: each stream is the
// request it was made for, in words.
type fakeStreamer struct {
	*fakeBackend
	err error
}

func (s *fakeStreamer) Stream(_ context.Context, req api.StreamRequest) (io.ReadCloser, string, error) {
	if s.err != nil {
		return nil, "", s.err
	}
	body := fmt.Sprintf("%s %s/%s/%s video=%v audio=%v start=%g", req.CID, req.Source.Container, req.Source.Video, req.Source.Audio, req.Video, req.Audio, req.Start)
	return io.NopCloser(strings.NewReader(body)), `video/mp4; codecs="avc1.640028,mp4a.40.2"`, nil
}

func (s *fakeStreamer) StreamStatus(cid string, src api.StreamSource) api.StreamStatus {
	return api.StreamStatus{CID: cid, Source: src, Max: 1}
}

// streamDoc is the document of a file ffprobe found video and audio
// codecs in.
func streamDoc(c, video, audio string) api.Document {
	details := api.Meta{}
	if video != "" {
		details["video"] = api.ListValue(api.ObjectValue(api.Meta{"codec": api.StringValue(video)}))
	}
	if audio != "" {
		details["audio"] = api.ListValue(api.ObjectValue(api.Meta{"codec": api.StringValue(audio)}))
	}
	return api.Document{CanonicalCID: c, Source: "local", Meta: api.Meta{"fileinfo": api.ObjectValue(api.Meta{
		"formatName": api.StringValue("matroska,webm"), "streamdetails": api.ObjectValue(details)})}}
}

func TestServer_Stream(t *testing.T) {
	b := &fakeBackend{docs: map[string]api.Document{heldV1: streamDoc(heldV1, "hevc", "ac3"), held: streamDoc(held, "", "")}}
	srv := newServer(&fakeStreamer{fakeBackend: b}, api.Options{})

	rec := serve(t, srv, "GET", "/api/stream/"+heldV0+"?start=12.5&video=0&audio=1", nil)
	if rec.Code != 200 || rec.Body.String() != heldV1+" matroska,webm/hevc/ac3 video=false audio=true start=12.5" {
		t.Fatalf("stream: %d %q", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Content-Type"); got != `video/mp4; codecs="avc1.640028,mp4a.40.2"` {
		t.Errorf("Content-Type %q", got)
	}
	rec = serve(t, srv, "GET", "/api/stream/"+heldV1+"/status", nil)
	var st api.StreamStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &st); rec.Code != 200 || err != nil || st.Source != (api.StreamSource{Container: "matroska,webm", Video: "hevc", Audio: "ac3"}) {
		t.Errorf("status: %d %s", rec.Code, rec.Body)
	}

	tests := []struct {
		name, target string
		code         int
		want         string
	}{
		{"a negative start", "/api/stream/" + heldV1 + "?start=-1", 400, "start=\"-1\": want seconds into the file"},
		{"a start that is no number", "/api/stream/" + heldV1 + "?start=NaN", 400, "want seconds into the file"},
		{"a flag that is no boolean", "/api/stream/" + heldV1 + "?video=maybe", 400, "video=\"maybe\""},
		{"an unknown parameter", "/api/stream/" + heldV1 + "?speed=2", 400, "unknown query parameter \"speed\""},
		{"no CID", "/api/stream/", 400, "missing CID"},
		{"a file without streams", "/api/stream/" + held, 422, "no video or audio stream ffprobe saw"},
		{"a file without streams, its status", "/api/stream/" + held + "/status", 422, "no video or audio stream"},
		{"an unknown file", "/api/stream/bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 404, "no file with CID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, srv, "GET", tt.target, nil)
			if msg := errMsg(t, rec); rec.Code != tt.code || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: %d %q, want %d with %q", tt.target, rec.Code, msg, tt.code, tt.want)
			}
		})
	}
}

func TestServer_StreamBusy(t *testing.T) {
	b := &fakeBackend{docs: map[string]api.Document{heldV1: streamDoc(heldV1, "hevc", "ac3")}}
	srv := newServer(&fakeStreamer{fakeBackend: b, err: fmt.Errorf("%w: all 1 transcodes (--transcodes) are busy", api.ErrStreamsBusy)}, api.Options{})
	rec := serve(t, srv, "GET", "/api/stream/"+heldV1, nil)
	if msg := errMsg(t, rec); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "10" || !strings.Contains(msg, "--transcodes") {
		t.Errorf("busy: %d, Retry-After %q, %q", rec.Code, rec.Header().Get("Retry-After"), msg)
	}
}

func TestServer_StreamWithoutStreamer(t *testing.T) {
	b := &fakeBackend{docs: map[string]api.Document{heldV1: streamDoc(heldV1, "hevc", "ac3")}}
	srv := newServer(b, api.Options{})
	rec := serve(t, srv, "GET", "/api/stream/"+heldV1+"/status", nil)
	if msg := errMsg(t, rec); rec.Code != 404 || !strings.Contains(msg, "ffmpeg is not on its PATH") {
		t.Errorf("a node without streams: %d %q", rec.Code, msg)
	}
}

// TestServer_StreamAccess: a stream is for the household's own browsers:
// off loopback it needs the token, whatever --public-read says.
func TestServer_StreamAccess(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	b := &fakeStreamer{fakeBackend: &fakeBackend{docs: map[string]api.Document{heldV1: streamDoc(heldV1, "hevc", "ac3")}}}
	for _, tt := range []struct {
		name   string
		access api.Access
		hdr    map[string]string
		code   int
	}{
		{"loopback", api.Access{Loopback: true}, nil, 200},
		{"token: without it", api.Access{Token: tok}, nil, 401},
		{"token: with it", api.Access{Token: tok}, map[string]string{"Authorization": "Bearer " + tok}, 200},
		{"public read", api.Access{Token: tok, PublicRead: true}, nil, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/stream/" + heldV1, "/api/stream/" + heldV1 + "/status"} {
				rec := serve(t, newServer(b, api.Options{Access: tt.access}), "GET", path, tt.hdr)
				if rec.Code != tt.code {
					t.Errorf("%s: %d %s, want %d", path, rec.Code, rec.Body, tt.code)
				}
			}
		})
	}
}
