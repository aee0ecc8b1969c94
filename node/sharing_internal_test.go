package node

import "testing"

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		fields map[string]string
		want   string
	}{
		{map[string]string{"originalTitle": "Big Buck Bunny", "movieYear": "2008", "mimeType": "video/matroska"}, "Big Buck Bunny (2008).mkv"},
		{map[string]string{"originalTitle": "The Show", "season": "1", "episode": "2", "episodeTitle": "The Storm", "mimeType": "video/mp4"}, "The Show S01E02 The Storm.mp4"},
		{map[string]string{"originalTitle": "a/b\\c", "mimeType": "application/x-unknown"}, "a_b_c"},
		{map[string]string{}, "bafyroot"},
	} {
		if got := fileName(tc.fields, "bafyroot"); got != tc.want {
			t.Errorf("fileName(%v) = %q, want %q", tc.fields, got, tc.want)
		}
	}
}
