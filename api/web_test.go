package api_test

import (
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// webTypes are the types the page's files must be served with: a module
// script of any other type does not run (the page sends nosniff).
var webTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// webRoutes lists the page's files on disk (web/) by the path the node
// serves each at: the page at /, the others at their own path.
func webRoutes(t *testing.T) map[string]string {
	t.Helper()
	routes := map[string]string{}
	err := fs.WalkDir(os.DirFS("web"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		route := "/" + p
		if p == "index.html" {
			route = "/"
		}
		routes[route] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/", "/style.css", "/js/main.js"} {
		if routes[want] == "" {
			t.Fatalf("web/ has no file served at %s: %v", want, routes)
		}
	}
	return routes
}

// TestWeb_Files: every file under web/ is served at its path (the page at
// /) as it is on disk, with its type, the page's CSP and nosniff; HEAD
// answers the headers alone; a path that is no file of the page is a 404.
func TestWeb_Files(t *testing.T) {
	srv := newServer(&fakeBackend{}, api.Options{})
	for route, file := range webRoutes(t) {
		t.Run(route, func(t *testing.T) {
			want, err := os.ReadFile(path.Join("web", file))
			if err != nil {
				t.Fatal(err)
			}
			rec := serve(t, srv, "GET", route, nil)
			if rec.Code != 200 || rec.Body.String() != string(want) {
				t.Fatalf("GET %s: %d, %d bytes; want 200 and the %d bytes of web/%s", route, rec.Code, rec.Body.Len(), len(want), file)
			}
			h := rec.Header()
			if got, want := h.Get("Content-Type"), webTypes[path.Ext(file)]; got != want || want == "" {
				t.Errorf("GET %s: Content-Type %q, want %q", route, got, want)
			}
			if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("GET %s: Content-Security-Policy %q", route, csp)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", route, got)
			}
			if head := serve(t, srv, "HEAD", route, nil); head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Type") != h.Get("Content-Type") {
				t.Errorf("HEAD %s: %d, %d bytes, %q", route, head.Code, head.Body.Len(), head.Header().Get("Content-Type"))
			}
		})
	}
	for _, p := range []string{"/index.html", "/js/", "/js/none.js", "/web/style.css", "/style.css/x"} {
		rec := serve(t, srv, "GET", p, nil)
		if rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
			continue
		}
		errMsg(t, rec)
	}
}

// importRe finds a module's static imports; scriptRe and srcRe the
// scripts of index.html.
var (
	importRe = regexp.MustCompile(`(?m)^\s*import\s+(?:[^;"]*?\s+from\s+)?"([^"]+)"`)
	scriptRe = regexp.MustCompile(`<script\b([^>]*)>`)
	srcRe    = regexp.MustCompile(`\bsrc="([^"]+)"`)
)

// TestWeb_ModuleImports: the page loads its script as a module, and
// every module it imports, as a browser resolves the import, is a file
// the node serves as JavaScript (a missing one stops the whole page, with
// no other trace than the browser's console).
func TestWeb_ModuleImports(t *testing.T) {
	routes := webRoutes(t)
	page, err := os.ReadFile("web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	var todo []string
	for _, m := range scriptRe.FindAllStringSubmatch(string(page), -1) {
		src := srcRe.FindStringSubmatch(m[1])
		if src == nil || !strings.Contains(m[1], `type="module"`) {
			t.Errorf("index.html: <script%s>: want a module script from a file of the page", m[1])
			continue
		}
		todo = append(todo, src[1])
	}
	if len(todo) == 0 {
		t.Fatal("index.html loads no script")
	}
	seen := map[string]bool{}
	for len(todo) > 0 {
		route := todo[0]
		todo = todo[1:]
		if seen[route] {
			continue
		}
		seen[route] = true
		file, ok := routes[route]
		if !ok || path.Ext(file) != ".js" {
			t.Errorf("%s is imported but is no module of the page", route)
			continue
		}
		src, err := os.ReadFile(path.Join("web", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importRe.FindAllStringSubmatch(string(src), -1) {
			spec := m[1]
			if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
				t.Errorf("%s imports %q: want a relative path to a file of the page", route, spec)
				continue
			}
			todo = append(todo, path.Join(path.Dir(route), spec))
		}
	}
	for route, file := range routes {
		if path.Ext(file) == ".js" && !seen[route] {
			t.Errorf("%s is served but no module imports it", route)
		}
	}
}
