package api

import (
	"reflect"
	"testing"
)

func TestTypeDocument(t *testing.T) {
	doc := map[string]any{
		"sizeByte": "26415", "season": "1", "episode": "2", "movieYear": "2005", "mtime": "1700000000000000000",
		"episodes": []any{"1", "2"}, "title": "1984", "release": map[string]any{"cd": "2", "group": "GRP"},
		"fileinfo": map[string]any{"duration": "1422.5", "streamdetails": map[string]any{
			"video": []any{map[string]any{"width": "1920", "codec": "h264"}}}},
		"origin": map[string]any{"12D3Koo": map[string]any{"season": "3", "sizeByte": "x"}},
	}
	typeDocument(doc)
	want := map[string]any{
		"sizeByte": int64(26415), "season": int64(1), "episode": int64(2), "movieYear": int64(2005), "mtime": "2023-11-14T22:13:20Z",
		"episodes": []any{int64(1), int64(2)}, "title": "1984", "release": map[string]any{"cd": int64(2), "group": "GRP"},
		"fileinfo": map[string]any{"duration": 1422.5, "streamdetails": map[string]any{
			"video": []any{map[string]any{"width": int64(1920), "codec": "h264"}}}},
		"origin": map[string]any{"12D3Koo": map[string]any{"season": int64(3), "sizeByte": "x"}},
	}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("got  %#v\nwant %#v", doc, want)
	}
}
