package model_test

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/model"
)

func TestNestMeta(t *testing.T) {
	s := model.StringValue
	tests := []struct {
		name string
		in   map[string]string
		want model.Meta
	}{
		{"nesting and lists", map[string]string{"title": "x", "genre/0": "Action", "genre/1": "Sci-Fi", "titles/eng": "I"},
			model.Meta{"title": s("x"), "genre": model.ListValue(s("Action"), s("Sci-Fi")), "titles": model.ObjectValue(model.Meta{"eng": s("I")})}},
		{"gap is not a list", map[string]string{"a/0": "x", "a/2": "y"},
			model.Meta{"a": model.ObjectValue(model.Meta{"0": s("x"), "2": s("y")})}},
		{"leading zero is not an index", map[string]string{"a/00": "x"},
			model.Meta{"a": model.ObjectValue(model.Meta{"00": s("x")})}},
		{"value and object", map[string]string{"a": "v", "a/b": "w"},
			model.Meta{"a": model.ObjectValue(model.Meta{"": s("v"), "b": s("w")})}},
		{"value and list-shaped object", map[string]string{"a": "v", "a/0": "w"},
			model.Meta{"a": model.ObjectValue(model.Meta{"": s("v"), "0": s("w")})}},
		{"top level keeps numeric keys as an object", map[string]string{"0": "x"}, model.Meta{"0": s("x")}},
		{"empty", map[string]string{}, model.Meta{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := model.NestMeta(tt.in, nil); !reflect.DeepEqual(got, tt.want) {
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
	model.NestMeta(in, func(pattern, v string) model.Value {
		got[v] = pattern
		return model.StringValue(v)
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
		if got := model.FlattenMeta(model.NestMeta(in, nil)); !reflect.DeepEqual(got, in) {
			t.Errorf("FlattenMeta(NestMeta(%v)) = %v", in, got)
		}
	}
	typed := model.Meta{
		"sizeByte": model.IntValue(3000000),
		"fileinfo": model.ObjectValue(model.Meta{"duration": model.FloatValue(1422.5), "tiny": model.FloatValue(1e-7), "huge": model.FloatValue(3e21)}),
		"ratings":  model.ListValue(model.FloatValue(8)),
		"mtime":    model.StringValue("2023-11-14T22:13:20.123456789Z"),
	}
	want := map[string]string{"sizeByte": "3000000", "fileinfo/duration": "1422.5", "fileinfo/tiny": "1e-7", "fileinfo/huge": "3e+21",
		"ratings/0": "8", "mtime": "2023-11-14T22:13:20.123456789Z"}
	if got := model.FlattenMeta(typed); !reflect.DeepEqual(got, want) {
		t.Errorf("typed values: %v, want %v", got, want)
	}
}
