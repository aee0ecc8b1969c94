package store

import "testing"

// Every coded field name reads back as itself from its two-byte entry,
// no two share a code, and a key-set member's entry is never taken for
// a code.
func TestFieldCodes_RoundTrip(t *testing.T) {
	seen := map[string]string{}
	for _, f := range fieldCodes {
		e := fieldEntry(f)
		if len(e) != 2 || e[0] != '/' || e[1] >= 0x20 {
			t.Errorf("%q is listed as %q, want '/' and a byte below 0x20", f, e)
		}
		if other, dup := seen[e]; dup {
			t.Errorf("%q and %q share the entry %q", f, other, e)
		}
		seen[e] = f
		if got := entryField(e); got != f {
			t.Errorf("entry %q reads as %q, want %q", e, got, f)
		}
		if _, ok := memberOfEntry(e); ok {
			t.Errorf("entry %q of %q reads as a key-set member", e, f)
		}
	}
	tests := []struct{ field, entry string }{
		{"cids/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", "/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"},
		{"cids/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", "/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"},
		{"titles/fre", "titles/fre"},
		{"fileinfo/streamdetails/video/1/codec", "fileinfo/streamdetails/video/1/codec"},
		{"\x01", "\x01"},
	}
	for _, tt := range tests {
		if e := fieldEntry(tt.field); e != tt.entry {
			t.Errorf("fieldEntry(%q) = %q, want %q", tt.field, e, tt.entry)
		}
		if f := entryField(tt.entry); f != tt.field {
			t.Errorf("entryField(%q) = %q, want %q", tt.entry, f, tt.field)
		}
	}
}
