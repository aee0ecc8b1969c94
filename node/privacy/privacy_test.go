package privacy_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/metamesh/node/node/privacy"
)

// mkfile writes a file (and its folders) under dir.
func mkfile(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func library(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRules_Markers(t *testing.T) {
	lib := library(t)
	mkfile(t, lib, "Home/"+privacy.PrivateMarker)
	mkfile(t, lib, "Home/Shared/"+privacy.ShareMarker)
	mkfile(t, lib, "Movies/"+privacy.ShareMarker)
	mkfile(t, lib, "Movies/Kids/"+privacy.PrivateMarker)
	r, err := privacy.New(privacy.Config{Libraries: []string{lib}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want privacy.Verdict
	}{
		{"a.mkv", privacy.Verdict{}},
		{"Shows/S01/e1.mkv", privacy.Verdict{}},
		{"Home/a.mkv", privacy.Verdict{Private: true}},
		{"Home/deep/er/a.mkv", privacy.Verdict{Private: true}},
		// Private wins over a share marker below it.
		{"Home/Shared/a.mkv", privacy.Verdict{Private: true}},
		{"Movies/a.mkv", privacy.Verdict{Shared: true}},
		{"Movies/Old/a.mkv", privacy.Verdict{Shared: true}},
		{"Movies/Kids/a.mkv", privacy.Verdict{Private: true}},
	} {
		t.Run(c.path, func(t *testing.T) {
			p := filepath.Join(lib, c.path)
			if got := r.Of(p); got != c.want {
				t.Errorf("Of(%s) = %+v, want %+v", c.path, got, c.want)
			}
			if r.Private(p) != c.want.Private || r.Shared(p) != c.want.Shared {
				t.Errorf("Private, Shared disagree with Of for %s", c.path)
			}
		})
	}
	if got := r.Of("/elsewhere/a.mkv"); !got.Private {
		t.Errorf("a path in no library: %+v, want private", got)
	}
	got := r.Folders()
	if want := []string{filepath.Join(lib, "Home"), filepath.Join(lib, "Movies/Kids")}; !slices.Equal(got.Private, want) {
		t.Errorf("Folders().Private = %v, want %v", got.Private, want)
	}
	if want := []string{filepath.Join(lib, "Movies")}; !slices.Equal(got.Shared, want) {
		t.Errorf("Folders().Shared = %v, want %v (a share marker under a private folder shares nothing)", got.Shared, want)
	}
}

func TestRules_CommandLine(t *testing.T) {
	lib := library(t)
	mkfile(t, lib, "Movies/a.mkv")
	mkfile(t, lib, "Movies/Private/"+privacy.PrivateMarker)
	mkfile(t, lib, "Other/b.mkv")
	t.Run("folder", func(t *testing.T) {
		r, err := privacy.New(privacy.Config{Libraries: []string{lib}, Shared: []string{filepath.Join(lib, "Movies") + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		for rel, want := range map[string]privacy.Verdict{
			"Movies/a.mkv":         {Shared: true},
			"Movies/Private/c.mkv": {Private: true},
			"Other/b.mkv":          {},
		} {
			if got := r.Of(filepath.Join(lib, rel)); got != want {
				t.Errorf("Of(%s) = %+v, want %+v", rel, got, want)
			}
		}
		if got := r.Folders().Shared; !slices.Contains(got, filepath.Join(lib, "Movies")) {
			t.Errorf("Folders().Shared = %v, want the command line's folder", got)
		}
	})
	t.Run("all", func(t *testing.T) {
		r, err := privacy.New(privacy.Config{Libraries: []string{lib}, ShareAll: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Of(filepath.Join(lib, "Other/b.mkv")); got != (privacy.Verdict{Shared: true}) {
			t.Errorf("Of(Other/b.mkv) = %+v, want shared", got)
		}
		if got := r.Of(filepath.Join(lib, "Movies/Private/c.mkv")); got != (privacy.Verdict{Private: true}) {
			t.Errorf("Of(Movies/Private/c.mkv) = %+v, want private", got)
		}
	})
	t.Run("outside", func(t *testing.T) {
		_, err := privacy.New(privacy.Config{Libraries: []string{filepath.Join(lib, "Movies")}, Shared: []string{filepath.Join(lib, "Other")}})
		if !errors.Is(err, privacy.ErrNotInLibrary) {
			t.Errorf("a folder outside the libraries: err = %v, want ErrNotInLibrary", err)
		}
		_, err = privacy.New(privacy.Config{Libraries: []string{lib}, Shared: []string{filepath.Join(lib, "missing")}})
		if err == nil {
			t.Error("a folder that does not exist: no error")
		}
	})
}

// A marker added or removed counts at the next question, and Look
// brings Folders in step with it.
func TestRules_MarkerAddedRemoved(t *testing.T) {
	lib := library(t)
	f := mkfile(t, lib, "Films/a.mkv")
	r, err := privacy.New(privacy.Config{Libraries: []string{lib}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Private(f) {
		t.Fatal("private before any marker")
	}
	m := mkfile(t, lib, "Films/"+privacy.PrivateMarker)
	r.Look(m)
	if !r.Private(f) {
		t.Error("not private once the marker is there")
	}
	if got := r.Folders().Private; !slices.Equal(got, []string{filepath.Join(lib, "Films")}) {
		t.Errorf("Folders().Private = %v", got)
	}
	if err := os.Remove(m); err != nil {
		t.Fatal(err)
	}
	r.Look(m)
	if r.Private(f) {
		t.Error("still private once the marker is gone")
	}
	if got := r.Folders().Private; len(got) != 0 {
		t.Errorf("Folders().Private = %v once the marker is gone", got)
	}
	if !privacy.IsMarker(m) || privacy.IsMarker(f) {
		t.Error("IsMarker")
	}
}

func TestRules_Nil(t *testing.T) {
	var r *privacy.Rules
	if r.Private("/a") || r.Shared("/a") || r.Of("/a") != (privacy.Verdict{}) {
		t.Error("a nil Rules keeps something private or shares something")
	}
}
