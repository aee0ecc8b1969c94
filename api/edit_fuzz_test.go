package api_test

import (
	"testing"

	"github.com/metamesh/node/api"
)

// A PATCH body from anyone with the token (or a hostile page's guess)
// never panics, and what it parses to stays within the caps: at most 256
// fields, none both set and deleted.
func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{`{"titles":{"eng":"x"},"movieYear":1964,"plot":null}`, `{}`, `null`, `[1]`, `{"a":[1,{"b":null}],"c":true}`, `{"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		set, del, err := api.ParsePatch(body)
		if err != nil {
			return
		}
		if len(set)+len(del) == 0 || len(set)+len(del) > 256 {
			t.Fatalf("%d fields parsed from %q", len(set)+len(del), body)
		}
		for _, k := range del {
			if _, ok := set[k]; ok {
				t.Fatalf("%q both set and deleted from %q", k, body)
			}
		}
	})
}

// A batch body never panics and parses to at most 1,000 items.
func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{`[{"cid":"bafk","set":{"a":"b"},"delete":["c"]}]`, `[]`, `{}`, `[{"cid":1}]`, `[{"x":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := api.ParseBatch(body)
		if err == nil && len(items) > 1000 {
			t.Fatalf("%d items", len(items))
		}
	})
}
