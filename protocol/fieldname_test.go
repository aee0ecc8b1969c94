package protocol_test

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// metaKeys are keys a peer might send, with whether the store can keep
// them as a field name.
var metaKeys = map[string]bool{
	"title":                   true,
	"fileinfo/duration":       true,
	"fileinfo/streams/0/kind": true,
	"a/b/c":                   true,
	"x":                       true,
	" ":                       true,
	"é/ü":                     true,
	"a.b":                     true,
	"a\\b":                    true,
	"":                        false,
	"/":                       false,
	"//":                      false,
	"a//b":                    false,
	"/title":                  false,
	"title/":                  false,
	"/title/":                 false,
	"a/b//c":                  false,
	"a///b":                   false,
	"fileinfo/":               false,
}

func TestValidFieldName(t *testing.T) {
	for key, want := range metaKeys {
		if got := protocol.ValidFieldName(key); got != want {
			t.Errorf("ValidFieldName(%q) = %v, want %v", key, got, want)
		}
	}
}

// A record's meta key is accepted on the wire exactly when the store can
// keep it: the store refuses the same shapes (store.ValidField), and the
// schema's own names it refuses are never shareable, but sizeByte, which
// the store keeps under origin/<peer>/ like every peer field.
func TestValidFieldName_AgreesWithStore(t *testing.T) {
	keys := slices.Sorted(maps.Keys(metaKeys))
	keys = append(keys, "filePath", "sizeByte", "mtime", "duplicates", "cids", "cids/x", "origin/p/title", "filePath/x")
	for _, key := range keys {
		shape := errors.Is(store.ValidField(key), store.ErrInvalidField)
		if shape == protocol.ValidFieldName(key) {
			t.Errorf("key %q: the store refuses its shape: %v, ValidFieldName: %v", key, shape, protocol.ValidFieldName(key))
		}
		storeOK := store.ValidField(key) == nil || key == "sizeByte"
		if wireOK := protocol.ValidFieldName(key) && protocol.ShareableKey(key); wireOK && !storeOK {
			t.Errorf("key %q crosses the wire but the store refuses it: %v", key, store.ValidField(key))
		}
	}
}

// A record holding a key the store cannot keep is refused whole, before
// it reaches the store.
func TestOpenRecord_RefusesFieldNamesTheStoreRefuses(t *testing.T) {
	f := newFixture(t)
	for key, ok := range metaKeys {
		if ok || key == "" {
			continue
		}
		w := f.good()
		w.Meta[key] = "v"
		env := sealRaw(t, f.key, protocol.RecordDomain, protocol.RecordProtocolID, mustJSON(t, w))
		if _, err := protocol.OpenRecord(env, f.id, f.sha); !errors.Is(err, protocol.ErrMalformedRecord) {
			t.Errorf("meta key %q: OpenRecord = %v, want ErrMalformedRecord", key, err)
		}
		if err := store.ValidField(key); err == nil {
			t.Errorf("meta key %q: the store takes it", key)
		}
	}
	// NewRecord drops such keys rather than refusing the record.
	r, err := protocol.NewRecord([]string{f.sha}, map[string]string{"title": "t", "a//b": "v", "/x": "v", "y/": "v"}, f.id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(r.Meta, map[string]string{"title": "t"}) {
		t.Errorf("NewRecord meta = %v, want only title", r.Meta)
	}
}
