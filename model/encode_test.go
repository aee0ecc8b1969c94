package model

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// The document is written by hand, not by encoding/json; these pin that
// its strings and numbers come out byte for byte as encoding/json writes
// them (the JSON of /api/meta is what it was when the document was a
// map encoding/json wrote).

func TestAppendString_AsEncodingJSON(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range []string{"", "plain", "<b>Tom & Jerry</b>", "quote \" back \\ slash", "\b\f\n\r\t\x00\x1f\x7f",
		"S\xe9ries", "\xff\xfe", "\u2028\u2029", "\uFFFD", "日本語", "a\xe2\x82", string(all)} {
		checkString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("<&>\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func checkString(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := appendString(nil, s); !bytes.Equal(got, want) {
		t.Errorf("%q: %s, encoding/json %s", s, got, want)
	}
}

func TestAppendFloat_AsEncodingJSON(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1422.5, 1422.48, 3600.25, 1e20, 1e21, 1e-6, 1e-7, 9.999999e-7,
		123456789012345678, 1.5e300, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 3e6, 1.2e7}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		floats = append(floats, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, f := range floats {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if _, err := appendFloat(nil, f); err == nil {
				t.Errorf("%v written", f)
			}
			continue
		}
		want, _ := json.Marshal(f)
		if got, err := appendFloat(nil, f); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v: %s (%v), encoding/json %s", f, got, err, want)
		}
	}
}
