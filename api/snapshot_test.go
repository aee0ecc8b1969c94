package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// fakeSnapshotter is a fakeBackend that exports a fixed body and records
// what an import was asked.
type fakeSnapshotter struct {
	*fakeBackend
	exportErr error
	importErr error
	got       api.SnapshotImport
	body      string
}

func (f *fakeSnapshotter) ExportSnapshot(_ context.Context, w io.Writer, localOnly bool) error {
	if f.exportErr != nil {
		return f.exportErr
	}
	_, err := fmt.Fprintf(w, "snapshot local_only=%v", localOnly)
	return err
}

func (f *fakeSnapshotter) ImportSnapshot(_ context.Context, open func() (io.ReadCloser, error), o api.SnapshotImport) (api.SnapshotReport, error) {
	for range 2 { // the import reads the file twice
		rc, err := open()
		if err != nil {
			return api.SnapshotReport{}, err
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		f.body = string(b)
	}
	f.got = o
	return api.SnapshotReport{Mode: "merge", Roots: 1, Added: 1}, f.importErr
}

func TestSnapshot_Params(t *testing.T) {
	tests := []struct {
		name, method, target string
		importErr            error
		code                 int
		want                 api.SnapshotImport
	}{
		{"export", "GET", "/api/snapshot", nil, 200, api.SnapshotImport{}},
		{"export local_only", "GET", "/api/snapshot?local_only=1", nil, 200, api.SnapshotImport{}},
		{"export unknown parameter", "GET", "/api/snapshot?all=1", nil, 400, api.SnapshotImport{}},
		{"import merge", "POST", "/api/snapshot", nil, 200, api.SnapshotImport{}},
		{"import replace dry run", "POST", "/api/snapshot?mode=replace&dry_run=1", nil, 200, api.SnapshotImport{Replace: true, DryRun: true}},
		{"import map_path", "POST", "/api/snapshot?map_path=/srv/a=/media/b/&map_path=/x=/y", nil, 200,
			api.SnapshotImport{MapPath: [][2]string{{"/srv/a", "/media/b"}, {"/x", "/y"}}}},
		{"import relative map_path", "POST", "/api/snapshot?map_path=srv=/media", nil, 400, api.SnapshotImport{}},
		{"import bad mode", "POST", "/api/snapshot?mode=overwrite", nil, 400, api.SnapshotImport{}},
		{"import refused", "POST", "/api/snapshot", fmt.Errorf("%w: snapshot line 3: altered", api.ErrBadRequest), 400, api.SnapshotImport{}},
		{"import fails", "POST", "/api/snapshot", errors.New("redis down"), 500, api.SnapshotImport{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeSnapshotter{fakeBackend: &fakeBackend{}, importErr: tt.importErr}
			srv := newServer(b, api.Options{})
			r, _ := http.NewRequest(tt.method, "http://localhost:4680"+tt.target, strings.NewReader("the file"))
			rec := serveRequest(srv, r)
			if rec.Code != tt.code {
				t.Fatalf("%d, want %d: %s", rec.Code, tt.code, rec.Body)
			}
			if tt.method == "POST" && tt.code == 200 {
				if !reflect.DeepEqual(b.got, tt.want) || b.body != "the file" {
					t.Errorf("import asked %+v with %q, want %+v with the body", b.got, b.body, tt.want)
				}
			}
			if tt.method == "GET" && tt.code == 200 && rec.Header().Get("Content-Type") != "application/gzip" {
				t.Errorf("export Content-Type %q", rec.Header().Get("Content-Type"))
			}
		})
	}
}

// A backend that is no Snapshotter answers 404; an export that fails
// before its first byte is a JSON error.
func TestSnapshot_NoSnapshotter(t *testing.T) {
	if rec := serve(t, newServer(&fakeBackend{}, api.Options{}), "GET", "/api/snapshot", nil); rec.Code != 404 {
		t.Errorf("no Snapshotter: %d %s", rec.Code, rec.Body)
	}
	b := &fakeSnapshotter{fakeBackend: &fakeBackend{}, exportErr: fmt.Errorf("%w: redis", api.ErrUnavailable)}
	if rec := serve(t, newServer(b, api.Options{}), "GET", "/api/snapshot", nil); rec.Code != 503 || errMsg(t, rec) == "" {
		t.Errorf("failed export: %d %s", rec.Code, rec.Body)
	}
}

// Off loopback, the token only: --public-read and a cookie do not open
// snapshots.
func TestSnapshot_Access(t *testing.T) {
	b := &fakeSnapshotter{fakeBackend: &fakeBackend{}}
	srv := newServer(b, api.Options{Access: api.Access{Token: "tok", PublicRead: true}})
	for _, tt := range []struct {
		method string
		hdr    map[string]string
		code   int
	}{
		{"GET", nil, 401},
		{"POST", nil, 401},
		{"POST", map[string]string{"Cookie": "metamesh_session=abc", "Sec-Fetch-Site": "same-origin"}, 401},
		{"GET", map[string]string{"Authorization": "Bearer tok"}, 200},
		{"POST", map[string]string{"Authorization": "Bearer tok"}, 200},
	} {
		if rec := serve(t, srv, tt.method, "/api/snapshot", tt.hdr); rec.Code != tt.code {
			t.Errorf("%s %v: %d, want %d: %s", tt.method, tt.hdr, rec.Code, tt.code, rec.Body)
		}
	}
}

// serveRequest serves r from loopback.
func serveRequest(srv http.Handler, r *http.Request) *httptest.ResponseRecorder {
	r.RemoteAddr = "127.0.0.1:50000"
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r)
	return rec
}
