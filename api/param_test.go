package api_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/protocol"
)

func TestParseCID(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am", "bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am", false},
		{"QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", "bafybeie5nqv6kd3qnfjupgvz34woh3oksc3iau6abmyajn7qvtf6d2ho34", false},
		{"", "", true},
		{"not-a-cid", "", true},
		{"bafy", "", true},
	}
	for _, tt := range tests {
		got, err := api.ParseCID(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseCID(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("ParseCID(%q) error %v does not wrap ErrBadRequest", tt.in, err)
		}
	}
}

func FuzzParseCID(f *testing.F) {
	f.Add("bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am")
	f.Add("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG")
	f.Add("%00")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := api.ParseCID(s)
		if err != nil {
			if !errors.Is(err, api.ErrBadRequest) {
				t.Fatalf("error %v is not a bad request", err)
			}
			return
		}
		if !protocol.IsCanonicalForm(c) {
			t.Fatalf("ParseCID(%q) = %q, not canonical", s, c)
		}
	})
}

// searchOnly is a Backend that answers only Search, and records that it
// was asked.
type searchOnly struct {
	api.Backend
	asked bool
}

func (b *searchOnly) Search(ctx context.Context, q string, limit int, cursor string, federated bool, from api.Caller) (api.SearchResult, error) {
	b.asked = true
	return api.SearchResult{}, nil
}

// FuzzSearchQueryWords checks that GET /api/search refuses exactly the
// queries in which the index finds no word (protocol.Tokens), and that a
// refusal says so.
func FuzzSearchQueryWords(f *testing.F) {
	for _, q := range []string{"  ", "x", " x ", "!?-", "...", "\u00a0\u3000", "é", "\u0301", "①", "ｘ", "s01e02", "'\"", "日本", "_", "٣"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if q == "" || len(q) > api.MaxSearchQuery || !utf8.ValidString(q) {
			return
		}
		b := &searchOnly{}
		srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: api.Access{Loopback: true}})
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/api/search?q="+url.QueryEscape(q), nil))
		words := len(protocol.Tokens(q)) > 0
		if b.asked != words || (rec.Code == 200) != words {
			t.Fatalf("q %q (index words %q): status %d, backend asked %v", q, protocol.Tokens(q), rec.Code, b.asked)
		}
		if !words && (rec.Code != 400 || !strings.Contains(rec.Body.String(), "holds no word")) {
			t.Fatalf("q %q: %d %s, want 400 saying it holds no word", q, rec.Code, rec.Body)
		}
	})
}
