package ingest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metamesh/node/ingest"
)

// TestLibraries: every spelling of one directory, and every library
// inside another, comes out once, as the outermost library, in the order
// of first appearance.
func TestLibraries(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"lib/sub/deeper", "lib2", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "lib"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	lib, sub, lib2, other := filepath.Join(root, "lib"), filepath.Join(root, "lib", "sub"), filepath.Join(root, "lib2"), filepath.Join(root, "other")

	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"one", []string{"lib"}, []string{lib}},
		{"relative and absolute", []string{"lib", lib}, []string{lib}},
		{"trailing slash", []string{"lib", "lib/"}, []string{lib}},
		{"dot segments", []string{"./lib", "other/../lib/."}, []string{lib}},
		{"symlink to it", []string{"link", "lib"}, []string{lib}},
		{"nested after its ancestor", []string{"lib", "lib/sub"}, []string{lib}},
		{"nested before its ancestor", []string{"lib/sub/deeper", "other", "lib"}, []string{other, lib}},
		{"nested through a symlink", []string{"lib", "link/sub"}, []string{lib}},
		{"nested twice", []string{"lib/sub", "lib/sub/deeper", "lib/sub/"}, []string{sub}},
		{"a common prefix is not nesting", []string{"lib", "lib2"}, []string{lib, lib2}},
		{"distinct ones keep their order", []string{"other", "lib2", "lib"}, []string{other, lib2, lib}},
		{"root holds everything", []string{"lib", "/"}, []string{"/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ingest.Libraries(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Libraries(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLibraries_Errors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"none", nil, "at least one"},
		{"missing", []string{root, filepath.Join(root, "nope")}, `library "` + filepath.Join(root, "nope") + `" does not exist`},
		{"a file", []string{file}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.Libraries(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Libraries(%q) = %v, want an error naming %q", tt.in, err, tt.want)
			}
		})
	}
}
