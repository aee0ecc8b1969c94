package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/prometheus/client_golang/prometheus"
)

// keepingBackend is a fakeBackend that also keeps encoded answers
// (api.AnswerCache), as the node does for cached local documents.
type keepingBackend struct {
	*fakeBackend
	kept map[string][]byte
}

func (b *keepingBackend) CachedAnswer(c string) ([]byte, bool) {
	body, ok := b.kept[c]
	b.record("kept %s %v", c, ok)
	return body, ok
}

// A kept answer is served for the CID exactly as kept, past the same
// access rules; everything else is answered by the routes as without one.
func TestServer_KeptAnswers(t *testing.T) {
	kept := []byte("{\n  \"kept\": true\n}\n")
	b := &keepingBackend{
		fakeBackend: &fakeBackend{docs: map[string]api.Document{heldV1: {CanonicalCID: heldV1, Source: "local"}}},
		kept:        map[string][]byte{heldV1: kept},
	}
	reg := prometheus.NewRegistry()
	srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: api.Access{Loopback: true}, Registerer: reg})
	tests := []struct {
		name, method, target string
		hdr                  map[string]string
		code                 int
		asked                string // the backend's calls, joined by "; "
		keptBody             bool
	}{
		{"kept", "GET", "/api/meta/" + heldV1, nil, 200, "kept " + heldV1 + " true", true},
		{"kept, local=1", "GET", "/api/meta/" + heldV1 + "?local=1", nil, 200, "kept " + heldV1 + " true", true},
		{"kept, local=false", "GET", "/api/meta/" + heldV1 + "?local=false", nil, 200, "kept " + heldV1 + " true", true},
		{"another form of the CID goes to the route", "GET", "/api/meta/" + heldV0, nil, 200,
			"kept " + heldV0 + " false; meta " + heldV1 + " local=false", false},
		{"HEAD goes to the route", "HEAD", "/api/meta/" + heldV1, nil, 200, "meta " + heldV1 + " local=false", false},
		{"a bad parameter is the route's error", "GET", "/api/meta/" + heldV1 + "?locl=1", nil, 400, "", false},
		{"local twice is the route's error", "GET", "/api/meta/" + heldV1 + "?local=1&local=1", nil, 400, "", false},
		{"garbage is the route's error", "GET", "/api/meta/banana", nil, 400, "kept banana false", false},
		{"more after the CID", "GET", "/api/meta/" + heldV1 + "/x", nil, 404, "", false},
		{"another Host is refused first", "GET", "/api/meta/" + heldV1, map[string]string{"Host": "evil.example"}, 403, "", false},
		{"a page of another site is refused first", "GET", "/api/meta/" + heldV1, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.mu.Lock()
			b.asked = nil
			b.mu.Unlock()
			rec := serve(t, srv, tt.method, tt.target, tt.hdr)
			if rec.Code != tt.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.code)
			}
			if got := strings.Join(b.calls(), "; "); got != tt.asked {
				t.Errorf("the backend was asked %q, want %q", got, tt.asked)
			}
			if got := rec.Body.String() == string(kept); got != tt.keptBody {
				t.Errorf("body %q (the kept one: %v, want %v)", rec.Body, got, tt.keptBody)
			}
			if ct, nosniff := rec.Header().Get("Content-Type"), rec.Header().Get("X-Content-Type-Options"); ct != "application/json" || nosniff != "nosniff" {
				t.Errorf("Content-Type %q, X-Content-Type-Options %q", ct, nosniff)
			}
		})
	}
	// The kept answers count as the route's, as the routes' own do.
	if got := requests(t, reg, "GET /api/meta/{cid}", "200"); got != 5 {
		t.Errorf("metamesh_http_requests_total{route=/api/meta/{cid},code=200} = %v, want 5", got)
	}
}

// requests is metamesh_http_requests_total{route, code} of reg (0 when
// it has none).
func requests(t *testing.T, reg *prometheus.Registry, route, code string) float64 {
	t.Helper()
	v, _ := counter(t, reg, "metamesh_http_requests_total", map[string]string{"route": route, "code": code})
	return v
}

// A request whose client went away before the answer counts as 499, not
// as the 500 its canceled lookup would answer: nothing failed here.
func TestServer_AbandonedRequestIs499(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := &fakeBackend{metaErr: context.Canceled}
	srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: api.Access{Loopback: true}, Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/api/meta/"+heldV1, nil)
	req.RemoteAddr = "127.0.0.1:5000"
	srv.ServeHTTP(httptest.NewRecorder(), req)
	if got := requests(t, reg, "GET /api/meta/{cid}", "499"); got != 1 {
		t.Errorf("abandoned requests counted as 499: %v, want 1", got)
	}
	if got := requests(t, reg, "GET /api/meta/{cid}", "500"); got != 0 {
		t.Errorf("abandoned requests counted as 500: %v", got)
	}
}
