package api_test

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/api"
)

func TestNestMeta(t *testing.T) {
	s := api.StringValue
	tests := []struct {
		name string
		in   map[string]string
		want api.Meta
	}{
		{"nesting and lists", map[string]string{"title": "x", "genre/0": "Action", "genre/1": "Sci-Fi", "titles/eng": "I"},
			api.Meta{"title": s("x"), "genre": api.ListValue(s("Action"), s("Sci-Fi")), "titles": api.ObjectValue(api.Meta{"eng": s("I")})}},
		{"gap is not a list", map[string]string{"a/0": "x", "a/2": "y"},
			api.Meta{"a": api.ObjectValue(api.Meta{"0": s("x"), "2": s("y")})}},
		{"leading zero is not an index", map[string]string{"a/00": "x"},
			api.Meta{"a": api.ObjectValue(api.Meta{"00": s("x")})}},
		{"value and object", map[string]string{"a": "v", "a/b": "w"},
			api.Meta{"a": api.ObjectValue(api.Meta{"": s("v"), "b": s("w")})}},
		{"value and list-shaped object", map[string]string{"a": "v", "a/0": "w"},
			api.Meta{"a": api.ObjectValue(api.Meta{"": s("v"), "0": s("w")})}},
		{"top level keeps numeric keys as an object", map[string]string{"0": "x"}, api.Meta{"0": s("x")}},
		{"empty", map[string]string{}, api.Meta{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := api.NestMeta(tt.in, nil); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NestMeta = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// The leaf function is given each field's pattern: its name with every
// list index written "*".
func TestNestMeta_Patterns(t *testing.T) {
	in := map[string]string{
		"title": "x", "episodes/0": "1", "episodes/1": "2",
		"fileinfo/streamdetails/video/0/width": "1920", "a": "v", "a/b": "w", "gap/0": "p", "gap/2": "q",
	}
	got := map[string]string{}
	api.NestMeta(in, func(pattern, v string) api.Value {
		got[v] = pattern
		return api.StringValue(v)
	})
	want := map[string]string{
		"x": "title", "1": "episodes/*", "2": "episodes/*", "1920": "fileinfo/streamdetails/video/*/width",
		"v": "a", "w": "a/b", "p": "gap/0", "q": "gap/2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patterns = %v, want %v", got, want)
	}
}

// TestFlattenMeta: flattening undoes NestMeta, field for field, and
// writes a typed number as the node's JSON writes it.
func TestFlattenMeta(t *testing.T) {
	for _, in := range []map[string]string{
		{"title": "x", "genre/0": "Action", "genre/1": "Sci-Fi", "titles/eng": "I"},
		{"a/0": "x", "a/2": "y"},
		{"a/00": "x"},
		{"a": "v", "a/b": "w"},
		{"a": "v", "a/0": "w"},
		{"0": "x"},
		{"fileinfo/streamdetails/audio/0/channels": "6", "fileinfo/streamdetails/audio/1/channels": "2", "grid/0/0": "a", "grid/1/0": "c"},
		{},
	} {
		if got := api.FlattenMeta(api.NestMeta(in, nil)); !reflect.DeepEqual(got, in) {
			t.Errorf("FlattenMeta(NestMeta(%v)) = %v", in, got)
		}
	}
	typed := api.Meta{
		"sizeByte": api.IntValue(3000000),
		"fileinfo": api.ObjectValue(api.Meta{"duration": api.FloatValue(1422.5), "tiny": api.FloatValue(1e-7), "huge": api.FloatValue(3e21)}),
		"ratings":  api.ListValue(api.FloatValue(8)),
		"mtime":    api.StringValue("2023-11-14T22:13:20.123456789Z"),
	}
	want := map[string]string{"sizeByte": "3000000", "fileinfo/duration": "1422.5", "fileinfo/tiny": "1e-7", "fileinfo/huge": "3e+21",
		"ratings/0": "8", "mtime": "2023-11-14T22:13:20.123456789Z"}
	if got := api.FlattenMeta(typed); !reflect.DeepEqual(got, want) {
		t.Errorf("typed values: %v, want %v", got, want)
	}
}
