package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metamesh/node/api"
)

// held is the one CID fedBackend holds.
const held = "bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am"

// fedBackend holds one file and asks "peers" (counts) for any other CID
// or a federated search, once from.Federate lets it, as a node does.
type fedBackend struct {
	api.Backend
	asked int
}

func (b *fedBackend) Meta(ctx context.Context, c string, local bool, from api.Caller) (api.Document, error) {
	if c == held {
		return api.Document{CanonicalCID: c, Source: "local"}, nil
	}
	if local {
		return api.Document{}, fmt.Errorf("%w: %s", api.ErrNotFound, c)
	}
	if err := from.Federate(api.FederatedLookup); err != nil {
		return api.Document{}, err
	}
	b.asked++
	return api.Document{}, fmt.Errorf("%w: no peer has %s", api.ErrNotFound, c)
}

func (b *fedBackend) Search(ctx context.Context, q string, limit int, cursor string, federated bool, from api.Caller) (api.SearchResult, error) {
	if federated && cursor == "" {
		if err := from.Federate(api.FederatedSearch); err != nil {
			return api.SearchResult{}, err
		}
		b.asked++
	}
	return api.SearchResult{}, nil
}

// TestServer_StrangerRefusals: the HTTP shape of a refusal, for a limit
// and for --stranger-rate 0, and who is never limited.
func TestServer_StrangerRefusals(t *testing.T) {
	const unknown = "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq"
	serve := func(srv *api.Server, remote, target, token string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("GET", "http://nas.lan"+target, nil)
		r.RemoteAddr = remote
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		return rec
	}
	errorOf := func(t *testing.T, rec *httptest.ResponseRecorder) string {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("body not JSON: %q", rec.Body)
		}
		if len(m) != 1 {
			t.Errorf("body %v, want only error", m)
		}
		msg, _ := m["error"].(string)
		return msg
	}
	const tok = "0123456789abcdef0123"
	public := api.Access{PublicRead: true, Token: tok}

	t.Run("past the burst", func(t *testing.T) {
		b := &fedBackend{}
		reg := prometheus.NewRegistry()
		srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: public, Registerer: reg,
			Strangers: api.StrangerLimits{Rate: 0.001, Burst: 2}})
		for i := range 2 {
			if rec := serve(srv, "192.0.2.7:4000", "/api/meta/"+unknown, ""); rec.Code != 404 {
				t.Fatalf("lookup %d: %d %s, want 404", i+1, rec.Code, rec.Body)
			}
		}
		rec := serve(srv, "192.0.2.7:4000", "/api/meta/"+unknown, "")
		if rec.Code != 429 {
			t.Fatalf("lookup 3: %d %s, want 429", rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Retry-After"); got != "1000" {
			t.Errorf("Retry-After %q, want 1000 (one token at 0.001/s)", got)
		}
		msg := errorOf(t, rec)
		for _, want := range []string{"federated lookups", "192.0.2.7", "0.001 per second, 2 at once", "retry in 1000 s", "?local=1"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		rec = serve(srv, "192.0.2.7:4000", "/api/search?q=show&federated=1", "")
		if rec.Code != 429 || !strings.Contains(errorOf(t, rec), "federated searches") {
			t.Errorf("federated search: %d %s, want 429 for searches", rec.Code, rec.Body)
		}
		if n, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("search Retry-After %q, want whole seconds", rec.Header().Get("Retry-After"))
		}
		if b.asked != 2 {
			t.Errorf("the backend asked peers %d times, want 2", b.asked)
		}
		for _, tt := range []struct{ name, target string }{
			{"held CID", "/api/meta/" + held},
			{"local lookup", "/api/meta/" + unknown + "?local=1"},
			{"local search", "/api/search?q=show"},
			{"federated search, next page", "/api/search?q=show&federated=1&cursor=x"},
		} {
			if rec := serve(srv, "192.0.2.7:4000", tt.target, ""); rec.Code == 429 {
				t.Errorf("%s: 429, want no limit on what needs no peer", tt.name)
			}
		}
		for what, want := range map[string]float64{"lookup": 1, "search": 1} {
			if got := rateLimited(t, reg, what); got != want {
				t.Errorf("metamesh_api_rate_limited_total{what=%q} = %g, want %g", what, got, want)
			}
		}
	})

	t.Run("never limited", func(t *testing.T) {
		limits := api.StrangerLimits{Rate: 0.001, Burst: 1}
		tests := []struct {
			name   string
			access api.Access
			remote string
			token  string
		}{
			{"loopback API, any address", api.Access{Loopback: true}, "192.0.2.7:4000", ""},
			{"client on 127.0.0.1", public, "127.0.0.1:4000", ""},
			{"client on [::1]", public, "[::1]:4000", ""},
			{"client with the token", public, "192.0.2.7:4000", tok},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := api.New(&fedBackend{}, slog.New(slog.DiscardHandler), api.Options{Access: tt.access, Strangers: limits})
				for i := range 5 {
					r := httptest.NewRequest("GET", "http://localhost/api/meta/"+unknown, nil)
					r.RemoteAddr = tt.remote
					if tt.token != "" {
						r.Header.Set("Authorization", "Bearer "+tt.token)
					}
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, r)
					if rec.Code != 404 {
						t.Fatalf("lookup %d: %d %s, want 404", i+1, rec.Code, rec.Body)
					}
				}
			})
		}
	})

	t.Run("a wrong token is a stranger", func(t *testing.T) {
		srv := api.New(&fedBackend{}, slog.New(slog.DiscardHandler), api.Options{Access: public,
			Strangers: api.StrangerLimits{Rate: 0.001, Burst: 1}})
		serve(srv, "192.0.2.7:4000", "/api/meta/"+unknown, "wrong-token-wrong-token")
		if rec := serve(srv, "192.0.2.7:4000", "/api/meta/"+unknown, "wrong-token-wrong-token"); rec.Code != 429 {
			t.Errorf("%d %s, want 429", rec.Code, rec.Body)
		}
	})

	t.Run("stranger-rate 0", func(t *testing.T) {
		b := &fedBackend{}
		srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: public})
		rec := serve(srv, "192.0.2.7:4000", "/api/meta/"+unknown, "")
		if rec.Code != 403 || rec.Header().Get("Retry-After") != "" {
			t.Fatalf("%d (Retry-After %q) %s, want 403 without Retry-After", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
		if msg := errorOf(t, rec); !strings.Contains(msg, "closed to clients without the bearer token") || !strings.Contains(msg, "--stranger-rate 0") {
			t.Errorf("error %q", msg)
		}
		if rec := serve(srv, "192.0.2.7:4000", "/api/meta/"+held, ""); rec.Code != 200 {
			t.Errorf("held CID: %d, want 200", rec.Code)
		}
		if b.asked != 0 {
			t.Errorf("the backend asked peers %d times, want none", b.asked)
		}
	})
}

// rateLimited is metamesh_api_rate_limited_total{what} of reg.
func rateLimited(t *testing.T, reg *prometheus.Registry, what string) float64 {
	t.Helper()
	v, ok := counter(t, reg, "metamesh_api_rate_limited_total", map[string]string{"what": what})
	if !ok {
		t.Fatalf("no metamesh_api_rate_limited_total{what=%q}", what)
	}
	return v
}

// counter is the value of counter name of reg whose labels are labels
// (exactly), and whether reg has it.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, labels) {
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}
