package api_test

import (
	"errors"
	"testing"

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
