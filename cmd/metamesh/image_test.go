package main

// The one-container image (make image-test): METAMESH_IMAGE names the
// image make image built; without it these skip, so make test never
// needs Docker. Everything runs as README's recipes say: docker run with
// the library read-only and a named volume for /data, then
// deploy/compose.yml with docker-compose.

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// imageUnderTest is the image make image-test built; the test skips
// without it.
func imageUnderTest(t *testing.T) string {
	t.Helper()
	img := os.Getenv("METAMESH_IMAGE")
	if img == "" {
		t.Skip("the container image: make image-test (METAMESH_IMAGE)")
	}
	return img
}

// dockerOut runs docker with args and returns its trimmed stdout.
func dockerOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// sampleLibrary is make sample's library in a directory the container's
// user can read.
func sampleLibrary(t *testing.T) (dir string, files int) {
	t.Helper()
	dir = t.TempDir()
	if out, err := exec.Command("../../scripts/sample.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("sample.sh: %v\n%s", err, out)
	}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, 0o755)
		}
		files++
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, files
}

// container is one container of the image: its API through the
// published port, its token read from the volume.
type container struct {
	t    *testing.T
	id   string // container
	base string // http://127.0.0.1:<published port>
}

// ready waits for /ready through the published port, then for the
// health check to say healthy.
func (h *container) ready() {
	h.t.Helper()
	waiting.Until(h.t, "/ready 200 through the published port", func() string {
		resp, err := http.Get(h.base + "/ready")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("%s %s", resp.Status, b)
		}
		return ""
	})
}

// token reads the API token out of the container's /data.
func (h *container) token() string {
	h.t.Helper()
	out, err := exec.Command("docker", "cp", h.id+":/data/api-token", "-").Output()
	if err != nil {
		h.t.Fatalf("docker cp the token: %v", err)
	}
	tr := tar.NewReader(strings.NewReader(string(out)))
	if _, err := tr.Next(); err != nil {
		h.t.Fatal(err)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// status is GET /api/status with token ("" sends none) and its HTTP
// status.
func (h *container) status(token string) (api.Status, int) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+"/api/status", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.Status
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			h.t.Fatal(err)
		}
	}
	return st, resp.StatusCode
}

// runContainer is README's docker run line, with the ports published on
// loopback at ports docker picks and the container removed at the end.
func runContainer(t *testing.T, img, lib, vol string) *container {
	t.Helper()
	id := dockerOut(t, "run", "-d", "-v", lib+":/library:ro", "-v", vol+":/data",
		"-p", "127.0.0.1::4680", "-p", "127.0.0.1::4681", "-p", "127.0.0.1::4681/udp", img)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command("docker", "logs", "--tail", "60", id).CombinedOutput()
			t.Logf("container %.12s's log:\n%s", id, logs)
		}
		_ = exec.Command("docker", "rm", "-f", "-v", id).Run()
	})
	port := dockerOut(t, "port", id, "4680/tcp")
	_, p, err := net.SplitHostPort(strings.Split(port, "\n")[0])
	if err != nil {
		t.Fatalf("docker port: %q: %v", port, err)
	}
	return &container{t: t, id: id, base: "http://127.0.0.1:" + p}
}

// The image runs a container as README's docker run line does: ready
// through the published port, the API off loopback wanting the token,
// not root, healthy; docker stop stops it cleanly; a new container on the
// same volume is the same container and hashes nothing again.
func TestImage_RunsAHousehold(t *testing.T) {
	t.Parallel()
	img := imageUnderTest(t)
	lib, files := sampleLibrary(t)
	vol := fmt.Sprintf("metamesh-imagetest-%d", os.Getpid())
	dockerOut(t, "volume", "create", vol)
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", vol).Run() })

	if u := dockerOut(t, "image", "inspect", "-f", "{{.Config.User}}", img); u == "" || u == "root" || strings.HasPrefix(u, "0") {
		t.Errorf("the image runs as %q, want a user that is not root", u)
	}
	if hc := dockerOut(t, "image", "inspect", "-f", "{{json .Config.Healthcheck.Test}}", img); !strings.Contains(hc, "health") {
		t.Errorf("the image's health check is %s", hc)
	}

	first := runContainer(t, img, lib, vol)
	first.ready()
	procs := dockerOut(t, "top", first.id, "-o", "pid,uid,comm")
	for _, l := range strings.Split(procs, "\n")[1:] {
		if f := strings.Fields(l); len(f) < 3 || f[1] != "10001" {
			t.Errorf("a process of the container runs as another user than metamesh (10001):\n%s", procs)
		}
	}
	if _, code := first.status(""); code != http.StatusUnauthorized {
		t.Errorf("/api/status without the token through the published port: %d, want 401", code)
	}
	token := first.token()
	st, code := first.status(token)
	if code != http.StatusOK {
		t.Fatalf("/api/status with the token: %d", code)
	}
	if st.Scan.Hashed != int64(files) {
		t.Errorf("the first container hashed %d files, want the library's %d", st.Scan.Hashed, files)
	}
	// README's "a link for the phone": the invite made inside the
	// container lets a browser outside in by the published port.
	link := ""
	for f := range strings.FieldsSeq(dockerOut(t, "exec", first.id, "metamesh", "invite", "--host", strings.TrimPrefix(first.base, "http://"))) {
		if strings.HasPrefix(f, first.base+"/invite/") {
			link = f
		}
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	if link == "" {
		t.Errorf("metamesh invite in the container printed no link to %s", first.base)
	} else if resp, err := browser.Get(link); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		lib, err := browser.Get(first.base + "/api/library")
		if err != nil {
			t.Fatal(err)
		}
		lib.Body.Close()
		if resp.StatusCode != http.StatusOK || lib.StatusCode != http.StatusOK {
			t.Errorf("the invite's browser: the page %s, /api/library %s; want 200 both", resp.Status, lib.Status)
		}
	}
	// ffmpeg in the image: every video without a poster gets a still,
	// which its entry shows.
	waiting.Until(t, "every video's entry with a poster or a still", func() string {
		resp, err := browser.Get(first.base + "/api/library?view=recent&limit=200")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var page api.LibraryPage
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			return err.Error()
		}
		for _, e := range page.Entries {
			if e.FileType == "video" && e.Poster == "" {
				return e.Title + " has neither"
			}
		}
		return ""
	})
	waiting.Until(t, "the health check to say healthy", func() string {
		if s := dockerOut(t, "inspect", "-f", "{{.State.Health.Status}}", first.id); s != "healthy" {
			return s
		}
		return ""
	})

	dockerOut(t, "stop", first.id)
	if code := dockerOut(t, "inspect", "-f", "{{.State.ExitCode}}", first.id); code != "0" {
		t.Errorf("docker stop: the node exited with %s, want 0 (137 is docker's SIGKILL after the grace period)", code)
	}
	if logs, _ := exec.Command("docker", "logs", "--tail", "3", first.id).CombinedOutput(); !strings.Contains(string(logs), "metamesh stopped") {
		t.Errorf("the node's last lines after docker stop:\n%s", logs)
	}

	second := runContainer(t, img, lib, vol)
	second.ready()
	st2, code := second.status(token)
	if code != http.StatusOK {
		t.Fatalf("/api/status of the second container with the first one's token: %d", code)
	}
	if st2.PeerID != st.PeerID {
		t.Errorf("the second container is peer %s, the first was %s", st2.PeerID, st.PeerID)
	}
	if st2.Scan.Hashed != 0 || st2.LibraryFiles != int64(files) {
		t.Errorf("the second container hashed %d files again (library %d files, want %d)", st2.Scan.Hashed, st2.LibraryFiles, files)
	}
}

// deploy/compose.yml runs the same container with docker-compose up -d.
func TestImage_Compose(t *testing.T) {
	t.Parallel()
	img := imageUnderTest(t)
	lib, files := sampleLibrary(t)
	compose := strings.Fields(os.Getenv("COMPOSE"))
	if len(compose) == 0 {
		compose = []string{"docker-compose"}
	}
	project := fmt.Sprintf("mmimagetest%d", os.Getpid())
	ports := freePorts(t, 2)
	env := append(os.Environ(), "MEDIA="+lib, "METAMESH_API_PORT="+ports[0], "METAMESH_P2P_PORT="+ports[1])
	run := func(args ...string) string {
		t.Helper()
		args = append(append(compose[1:], "-p", project, "-f", "../../deploy/compose.yml"), args...)
		cmd := exec.Command(compose[0], args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", compose[0], strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Cleanup(func() {
		args := append(append(compose[1:], "-p", project, "-f", "../../deploy/compose.yml"), "down", "-v", "-t", "10")
		cmd := exec.Command(compose[0], args...)
		cmd.Env = env
		_ = cmd.Run()
	})
	if !strings.HasSuffix(img, ":latest") {
		t.Skipf("deploy/compose.yml runs metamesh:latest, not %s", img)
	}
	run("up", "-d")
	id := strings.TrimSpace(lastLine(run("ps", "-q", "metamesh")))
	h := &container{t: t, id: id, base: "http://127.0.0.1:" + ports[0]}
	h.ready()
	st, code := h.status(h.token())
	if code != http.StatusOK {
		t.Fatalf("/api/status with the token: %d", code)
	}
	if st.LibraryFiles != int64(files) {
		t.Errorf("the compose container has %d library files, want %d", st.LibraryFiles, files)
	}
	if ro := dockerOut(t, "inspect", "-f", `{{range .Mounts}}{{if eq .Destination "/library"}}{{.RW}}{{end}}{{end}}`, id); ro != "false" {
		t.Errorf("/library mounted read-write (%q)", ro)
	}
}

// freePorts are n loopback TCP ports free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		out = append(out, p)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
