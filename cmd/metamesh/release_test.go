package main

// The release archives (make release-test): built by scripts/release.sh
// into METAMESH_RELEASE_DIST, then checked here; without it these skip,
// so make test never builds three platforms.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// releaseDist is the directory make release wrote, and the version it
// stamped; the test skips without them.
func releaseDist(t *testing.T) (dist, version string) {
	t.Helper()
	dist, version = os.Getenv("METAMESH_RELEASE_DIST"), os.Getenv("METAMESH_RELEASE_VERSION")
	if dist == "" || version == "" {
		t.Skip("the release archives: make release-test (METAMESH_RELEASE_DIST, METAMESH_RELEASE_VERSION)")
	}
	return dist, version
}

// The sums verify, and a second build of the same commit gives the same
// ones: the archives are reproducible.
func TestRelease_SumsVerifyAndRepeat(t *testing.T) {
	dist, version := releaseDist(t)
	sums := exec.Command("sha256sum", "--strict", "-c", "SHA256SUMS")
	sums.Dir = dist
	if out, err := sums.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	} else if n := strings.Count(string(out), ": OK"); n != 3 {
		t.Errorf("SHA256SUMS verified %d archives, want 3:\n%s", n, out)
	}
	again := t.TempDir()
	cmd := exec.Command("../../scripts/release.sh", again)
	cmd.Env = append(os.Environ(), "VERSION="+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a second release.sh: %v\n%s", err, out)
	}
	first, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(filepath.Join(again, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("two builds of one commit differ:\n%s\nthen\n%s", first, second)
	}
}

// Each archive holds a static binary for its platform, with no build
// path in it, README.md, INSTALL.md and the service unit, owned by 0:0;
// every binary prints its version and hashes a file as the others do,
// the arm64 and arm ones under qemu-user-static.
func TestRelease_Archives(t *testing.T) {
	dist, version := releaseDist(t)
	pwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(filepath.Dir(pwd))
	file := filepath.Join(t.TempDir(), "clip.bin")
	data := make([]byte, 3<<20+12345) // more than one chunk of every hash
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for _, tc := range []struct {
		arch, qemu string
		machine    elf.Machine
	}{
		{"amd64", "", elf.EM_X86_64},
		{"arm64", "qemu-aarch64-static", elf.EM_AARCH64},
		{"arm", "qemu-arm-static", elf.EM_ARM},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			name := "metamesh-" + version + "-linux-" + tc.arch
			files := untar(t, filepath.Join(dist, name+".tar.gz"))
			var got []string
			for n := range files {
				got = append(got, n)
			}
			slices.Sort(got)
			want := []string{name + "/", name + "/INSTALL.md", name + "/README.md", name + "/metamesh", name + "/metamesh.env", name + "/metamesh.service"}
			if !slices.Equal(got, want) {
				t.Fatalf("the archive holds %q, want %q", got, want)
			}
			bin := files[name+"/metamesh"]
			f, err := elf.NewFile(bytes.NewReader(bin))
			if err != nil {
				t.Fatal(err)
			}
			if f.Machine != tc.machine {
				t.Errorf("the binary is for %v, want %v", f.Machine, tc.machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("the binary is not static: it has a %v program header", p.Type)
				}
			}
			for _, path := range []string{repo, goEnv(t, "GOMODCACHE"), goEnv(t, "GOROOT")} {
				if path != "" && bytes.Contains(bin, []byte(path)) {
					t.Errorf("the binary holds the build path %s", path)
				}
			}
			exe := filepath.Join(t.TempDir(), "metamesh")
			if err := os.WriteFile(exe, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) string {
				t.Helper()
				if tc.qemu != "" {
					args = append([]string{tc.qemu, exe}, args...)
				} else {
					args = append([]string{exe}, args...)
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v", strings.Join(args, " "), err)
				}
				return string(out)
			}
			if v := run("version"); !strings.HasPrefix(v, "metamesh "+version+" (commit ") || !strings.Contains(v, " linux/"+tc.arch+")") {
				t.Errorf("version printed %q, want metamesh %s … linux/%s", v, version, tc.arch)
			}
			h := run("hash", file)
			if !strings.Contains(h, `"canonical":"`) {
				t.Errorf("hash printed %q", h)
			}
			hashes = append(hashes, h)
			if hashes[0] != h {
				t.Errorf("linux/%s hashed the file as\n%s\nlinux/amd64 as\n%s", tc.arch, h, hashes[0])
			}
		})
	}
}

// untar is every entry of a .tar.gz by name (directories with an empty
// body), each checked to be owned by 0:0.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip keeps a name %q or a time %v", path, zr.Name, zr.ModTime)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: %s owned by %d:%d (%q:%q), want 0:0", path, h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

// goEnv is a go env variable: GOROOT and GOMODCACHE are build paths
// -trimpath keeps out of the binary.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
