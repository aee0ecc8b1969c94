package docfiles

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocFileLists checks, for every package of the module that has a
// doc.go, its file list: the section under the "# Files" heading of the
// package comment (up to the next heading), or the whole package comment
// when it has no such heading. Every non-test .go file of the package
// (build-constrained ones included; doc.go itself excepted) must be named
// there, and every name there that ends in .go must be a file of the
// package (a test file too) or, holding a *, a pattern that matches one.
// Names with a / (another package's files, paths under testdata) and
// files that are not .go (scripts, Lua, testdata) are not checked.
// A package without a doc.go fails.
func TestDocFileLists(t *testing.T) {
	root := moduleRoot(t)
	var without []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		files, err := goFiles(path)
		if err != nil {
			return err
		}
		switch {
		case len(files) == 0:
		case !slices.Contains(files, "doc.go"):
			without = append(without, rel)
		default:
			t.Run(rel, func(t *testing.T) { checkPackage(t, path, files) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(without) > 0 {
		t.Errorf("packages without a doc.go (what each owns, its files, goroutines and concurrency): %s", strings.Join(without, ", "))
	}
}

// goFileName is a file name ending in .go as a doc comment writes it,
// with any path before it (a name with a / is not the package's).
var goFileName = regexp.MustCompile(`[\w.*/-]+\.go\b`)

func checkPackage(t *testing.T, dir string, files []string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "doc.go"), nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	list := fileList(f.Doc.Text())
	named := map[string]bool{}
	for _, n := range goFileName.FindAllString(list, -1) {
		n = strings.TrimLeft(n, ".-")
		if strings.Contains(n, "/") {
			continue
		}
		if !strings.Contains(n, "*") {
			if !slices.Contains(files, n) {
				t.Errorf("doc.go names %s, which is not a file of the package", n)
			}
			named[n] = true
			continue
		}
		matched := false
		for _, file := range files {
			if ok, _ := filepath.Match(n, file); ok {
				named[file], matched = true, true
			}
		}
		if !matched {
			t.Errorf("doc.go names %s, which matches no file of the package", n)
		}
	}
	for _, file := range files {
		if file != "doc.go" && !strings.HasSuffix(file, "_test.go") && !named[file] {
			t.Errorf("%s is not named in doc.go's file list", file)
		}
	}
}

// fileList is the "# Files" section of a package comment's text, or all
// of it when it has no such heading.
func fileList(doc string) string {
	lines := strings.Split(doc, "\n")
	start := slices.Index(lines, "# Files")
	if start < 0 {
		return doc
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "# ") {
			end = i
			break
		}
	}
	return strings.Join(lines[start+1:end], "\n")
}

// goFiles are the names of the .go files in dir, sorted.
func goFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// moduleRoot is the directory of the go.mod above the test's.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
