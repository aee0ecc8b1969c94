package store_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/metamesh/node/store"
)

func TestFlatten(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want map[string]string
	}{
		{"seed example", map[string]any{
			"title":   "Inception",
			"video":   map[string]any{"codec": "h265", "width": "1920"},
			"streams": []any{map[string]any{"language": "eng"}, map[string]any{"language": "jpn"}},
		}, map[string]string{
			"title": "Inception", "video/codec": "h265", "video/width": "1920",
			"streams/0/language": "eng", "streams/1/language": "jpn",
		}},
		{"scalars", map[string]any{"n": 7200.5, "i": 3, "b": true, "null": nil, "big": 4294967296.0},
			map[string]string{"n": "7200.5", "i": "3", "b": "true", "null": "", "big": "4294967296"}},
		{"json numbers", map[string]any{"n": json.Number("1e3")}, map[string]string{"n": "1e3"}},
		{"typed", map[string][]int{"a": {1, 2}}, map[string]string{"a/0": "1", "a/1": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Flatten("", tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Flatten = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUnflatten(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want map[string]any
	}{
		{"nesting and arrays", map[string]string{
			"title": "x", "genre/0": "Action", "genre/1": "Sci-Fi", "titles/eng": "I",
		}, map[string]any{"title": "x", "genre": []any{"Action", "Sci-Fi"}, "titles": map[string]any{"eng": "I"}}},
		{"gap is not an array", map[string]string{"a/0": "x", "a/2": "y"},
			map[string]any{"a": map[string]any{"0": "x", "2": "y"}}},
		{"leading zero is not an index", map[string]string{"a/00": "x"},
			map[string]any{"a": map[string]any{"00": "x"}}},
		{"value and object", map[string]string{"a": "v", "a/b": "w"},
			map[string]any{"a": map[string]any{"": "v", "b": "w"}}},
		{"top level keeps numeric keys as an object", map[string]string{"0": "x"},
			map[string]any{"0": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Unflatten(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unflatten = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestFlattenRoundTrip(t *testing.T) {
	in := map[string]any{"fileinfo": map[string]any{"streamdetails": map[string]any{
		"video": []any{map[string]any{"codec": "h264", "width": "1920"}},
	}}, "genre": []any{"a", "b", "c"}}
	got := store.Unflatten(store.Flatten("", in))
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip = %#v, want %#v", got, in)
	}
}
