package testnet

// The docker-compose testnet (docker-compose.yml at the repository root)
// checked against real containers: `make testnet-test` runs these with
// METAMESH_TESTNET_COMPOSE=1 after building the images; without it they
// are skipped, so `make test` never needs Docker. Containers are found with
// `ps -q SERVICE`, never by name, so Compose v1 and v2 both work.

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
)

// composeNet is one compose project: the command, its files and the
// environment every invocation gets (so `up` never sees a changed config).
type composeNet struct {
	t       *testing.T
	cmd     []string
	project string
	root    string // repository root, the project directory
	files   []string
	env     []string
}

func newComposeNet(t *testing.T, project string, files ...string) *composeNet {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Fields(os.Getenv("COMPOSE"))
	if len(cmd) == 0 {
		cmd = []string{"docker-compose"}
		if exec.Command("docker", "compose", "version").Run() == nil {
			cmd = []string{"docker", "compose"}
		}
	}
	return &composeNet{t: t, cmd: cmd, project: project, root: root, files: files}
}

func (c *composeNet) run(args ...string) (string, error) {
	full := append([]string{}, c.cmd[1:]...)
	full = append(full, "-p", c.project)
	for _, f := range c.files {
		full = append(full, "-f", filepath.Join(c.root, f))
	}
	full = append(full, args...)
	cmd := exec.Command(c.cmd[0], full...)
	cmd.Dir = c.root
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", c.cmd[0], strings.Join(full, " "), err, errb.String())
	}
	return out.String(), nil
}

func (c *composeNet) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// down removes the project's containers, networks and volumes.
func (c *composeNet) down() {
	if _, err := c.run("down", "-v", "--remove-orphans", "-t", "2"); err != nil {
		c.t.Logf("teardown: %v", err)
	}
}

// container is the ID of a service's container.
func (c *composeNet) container(svc string) string {
	c.t.Helper()
	id := strings.TrimSpace(c.must("ps", "-q", svc))
	if id == "" {
		c.t.Fatalf("%s: no container", svc)
	}
	return id
}

// peerID generates (once; it stays in the data volume) a service's identity.
func (c *composeNet) peerID(svc string) string {
	c.t.Helper()
	out := c.must("run", "--rm", "--no-deps", "-T", "--entrypoint", "/usr/local/bin/metamesh", svc, "id", "--create", "--data", "/data")
	lines := strings.Fields(strings.TrimSpace(out))
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "12D3KooW") {
		c.t.Fatalf("%s: metamesh id printed %q", svc, out)
	}
	return lines[len(lines)-1]
}

// waitHealthy waits until every service's container reports healthy
// (for up to limit, past waiting.Guard when a start needs it); a
// container that does not has its last log lines written to the test's
// log.
func (c *composeNet) waitHealthy(limit time.Duration, svcs ...string) {
	c.t.Helper()
	for _, s := range svcs {
		id := c.container(s)
		healthy := false
		defer func() { // runs on the failed wait's Fatalf too
			if !healthy {
				logs, _ := exec.Command("docker", "logs", "--tail", "40", id).CombinedOutput()
				c.t.Logf("%s's log:\n%s", s, logs)
			}
		}()
		waiting.Until(c.t, s+" healthy", func() string {
			out, _ := exec.Command("docker", "inspect", "-f", "{{.State.Health.Status}}", id).Output()
			if st := strings.TrimSpace(string(out)); st != "healthy" {
				return fmt.Sprintf("health %q", st)
			}
			return ""
		}, sweep, waiting.Limit(limit))
		healthy = true
	}
}

// apiURL is the loopback URL a service's API is published on.
func (c *composeNet) apiURL(svc string) string {
	c.t.Helper()
	return "http://" + strings.TrimSpace(c.must("port", svc, "4680"))
}

// token reads the API token the node generated in its /data.
func (c *composeNet) token(svc string) string {
	c.t.Helper()
	out, err := exec.Command("docker", "cp", c.container(svc)+":/data/api-token", "-").Output()
	if err != nil {
		c.t.Fatalf("%s: docker cp api-token: %v", svc, err)
	}
	tr := tar.NewReader(bytes.NewReader(out))
	if _, err := tr.Next(); err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(tr)
	return strings.TrimSpace(string(b))
}

// onInterrupt tears the projects down on Ctrl-C or SIGTERM, which would
// otherwise end the test binary without running its cleanups.
func onInterrupt(nets ...*composeNet) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			for _, n := range nets {
				n.down()
			}
			os.Exit(130)
		case <-done:
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// fileCIDs is what `metamesh hash` says of a host file.
type fileCIDs struct {
	Path      string `json:"path"`
	Midhash   string `json:"midhash256"`
	Sha       string `json:"sha2-256"`
	IPFS      string `json:"ipfs"`
	Canonical string `json:"canonical"`
}

func (f fileCIDs) all() []string { return []string{f.Canonical, f.Sha, f.Midhash} }

func (f fileCIDs) set() string {
	s := []string{f.Midhash, f.Sha, f.IPFS}
	sort.Strings(s)
	return strings.Join(uniq(s), " ")
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func hashFile(t *testing.T, path string) fileCIDs {
	t.Helper()
	out, err := exec.Command("../bin/metamesh", "hash", path).Output()
	if err != nil {
		t.Fatalf("metamesh hash %s: %v", path, err)
	}
	var f fileCIDs
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// writeRandom writes n random bytes to path (mode 0644, readable by the
// container's user).
func writeRandom(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeTmp := filepath.Join(filepath.Dir(to), ".tmp-"+filepath.Base(to))
	if err := os.WriteFile(writeTmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(writeTmp, to); err != nil {
		t.Fatal(err)
	}
}

var httpc = &http.Client{Timeout: 20 * time.Second}

// getJSON GETs base+path (with a bearer token when given) and decodes it.
func getJSON(base, path, token string) (int, map[string]any, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, m, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// household is one node of the testnet as the checks see it.
type household struct {
	svc, url, peer, token, lib string
}

// checkMeta looks c up on h and says what is wrong with the answer, or "".
// holders are the peers that may answer; none means h holds it itself.
func checkMeta(h *household, c string, want fileCIDs, holders []string) string {
	code, m, err := getJSON(h.url, "/api/meta/"+c, "")
	if err != nil {
		return err.Error()
	}
	if code != http.StatusOK {
		return fmt.Sprintf("%s: %d %v", c, code, m["error"])
	}
	cids := strs(m["cids"])
	sort.Strings(cids)
	if got := strings.Join(uniq(cids), " "); got != want.set() {
		return fmt.Sprintf("%s: key-set %q, want %q", c, got, want.set())
	}
	if m["canonical_cid"] != want.Canonical {
		return fmt.Sprintf("%s: canonical %v, want %s", c, m["canonical_cid"], want.Canonical)
	}
	if len(holders) > 0 {
		src, _ := m["source"].(string)
		if !has(holders, src) {
			return fmt.Sprintf("%s: source %q, not one of the holders %v", c, src, holders)
		}
		if p, ok := m["filePath"]; ok && p != nil {
			return fmt.Sprintf("%s: a peer's file carries a local path %v", c, p)
		}
		if d := strs(m["duplicates"]); len(d) > 0 {
			return fmt.Sprintf("%s: a peer's file carries local duplicates %v", c, d)
		}
	}
	return ""
}

// sweep is how often a wait on a compose testnet asks again: a check is
// HTTP requests to the containers, often to every one of them, and
// asking twice a second leaves the nodes their CPU.
var sweep = waiting.Every(500 * time.Millisecond)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func libFiles(t *testing.T, lib string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(lib, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func dockerStats(t *testing.T, ids map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var names []string
	for n := range ids {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := exec.Command("docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", ids[n]).Output()
		if err != nil {
			t.Fatalf("docker stats %s: %v", n, err)
		}
		out[n] = strings.TrimSpace(strings.SplitN(string(b), "/", 2)[0])
	}
	return out
}

func composeGate(t *testing.T) {
	if os.Getenv("METAMESH_TESTNET_COMPOSE") != "1" {
		t.Skip("the docker-compose testnet: make testnet-test (METAMESH_TESTNET_COMPOSE=1, images built)")
	}
	if _, err := os.Stat("../bin/metamesh"); err != nil {
		t.Skip("no ../bin/metamesh: make testnet-test builds it")
	}
}

func projectName(suffix string) string {
	p := os.Getenv("METAMESH_TESTNET_PROJECT")
	if p == "" {
		p = fmt.Sprintf("mmtest%d", os.Getpid())
	}
	return p + suffix
}

// TestCompose runs the three-household testnet of docker-compose.yml and
// its fault scenarios, printing the figures docs/testnet.md reports.
func TestCompose(t *testing.T) {
	t.Parallel()
	composeGate(t)
	c := newComposeNet(t, projectName(""), "docker-compose.yml")
	libs, err := os.MkdirTemp("", "metamesh-testnet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(libs) })
	if out, err := exec.Command("./compose/libs.sh", libs).CombinedOutput(); err != nil {
		t.Fatalf("libs.sh: %v: %s", err, out)
	}
	_ = os.Chmod(libs, 0o755)
	c.env = []string{"LIBS=" + libs}
	for i := 1; i <= 3; i++ {
		c.env = append(c.env, fmt.Sprintf("H%d_PORT=%d", i, freePort(t)))
	}
	t.Cleanup(c.down)
	defer onInterrupt(c)()

	hs := make([]*household, 3)
	for i := range hs {
		svc := fmt.Sprintf("household%d", i+1)
		hs[i] = &household{svc: svc, peer: c.peerID(svc), lib: filepath.Join(libs, svc)}
		c.env = append(c.env, fmt.Sprintf("H%d_PEER=%s", i+1, hs[i].peer))
	}
	start := time.Now()
	c.must("up", "-d")
	c.waitHealthy(3*time.Minute, "household1", "household2", "household3")
	healthy := time.Since(start)
	t.Logf("FIGURE time from up to all households healthy: %.1f s", healthy.Seconds())
	for _, h := range hs {
		h.url = c.apiURL(h.svc)
		h.token = c.token(h.svc)
	}

	// Every file, its CIDs and the households holding it (by content).
	type file struct {
		cids    fileCIDs
		holders []int
	}
	files := map[string]*file{} // canonical → file
	scanLibs := func() {
		for k := range files {
			delete(files, k)
		}
		for i, h := range hs {
			for _, p := range libFiles(t, h.lib) {
				f := hashFile(t, p)
				if files[f.Canonical] == nil {
					files[f.Canonical] = &file{cids: f}
				}
				files[f.Canonical].holders = append(files[f.Canonical].holders, i)
			}
		}
	}
	scanLibs()
	peersOf := func(idx []int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, hs[i].peer)
		}
		return out
	}
	holds := func(f *file, i int) bool {
		for _, x := range f.holders {
			if x == i {
				return true
			}
		}
		return false
	}
	// resolveAll: every household resolves every file by every CID to the
	// right key-set, attributed to a holder when it is not its own.
	resolveAll := func(what string, opts ...waiting.Option) time.Duration {
		return waiting.Until(t, what, func() string {
			for i, h := range hs {
				for _, f := range files {
					var holders []string
					if !holds(f, i) {
						holders = peersOf(f.holders)
					}
					for _, cid := range f.cids.all() {
						if e := checkMeta(h, cid, f.cids, holders); e != "" {
							return h.svc + ": " + e
						}
					}
				}
			}
			return ""
		}, append([]waiting.Option{sweep}, opts...)...)
	}
	mem := map[string]map[string]string{}
	nodeIDs := func() map[string]string {
		m := map[string]string{}
		for _, h := range hs {
			m[h.svc] = c.container(h.svc)
			r := "redis" + strings.TrimPrefix(h.svc, "household")
			m[r] = c.container(r)
		}
		return m
	}
	mem["idle"] = dockerStats(t, nodeIDs())

	t.Run("FederatedSearch", func(t *testing.T) {
		// Titles held by one household only, asked from the other two.
		words := []string{"Aurora", "Basilisk", "Cobalt"}
		for owner, w := range words {
			for i, h := range hs {
				if i == owner {
					continue
				}
				waiting.Until(t, h.svc+" search "+w, func() string {
					code, m, err := getJSON(h.url, "/api/search?federated=1&q="+w, "")
					if err != nil || code != 200 {
						return fmt.Sprintf("%d %v %v", code, err, m)
					}
					hits, _ := m["hits"].([]any)
					for _, x := range hits {
						hit, _ := x.(map[string]any)
						if hit["source"] == hs[owner].peer || has(strs(hit["peers"]), hs[owner].peer) {
							return ""
						}
					}
					return fmt.Sprintf("no hit from %s in %v", hs[owner].svc, m)
				}, sweep)
			}
		}
	})

	t.Run("ResolveEveryCID", func(t *testing.T) {
		d := resolveAll("every household resolves every CID")
		t.Logf("all %d files resolved by every CID on every household in %.1f s", len(files), d.Seconds())
	})

	t.Run("SharedFileMerges", func(t *testing.T) {
		// The file household1 and household2 share, seen from household3.
		for _, f := range files {
			if len(f.holders) != 2 || holds(f, 2) {
				continue
			}
			waiting.Until(t, "both providers", func() string {
				for _, cid := range f.cids.all() {
					if e := checkMeta(hs[2], cid, f.cids, peersOf(f.holders)); e != "" {
						return e
					}
				}
				_, m, err := getJSON(hs[2].url, "/api/meta/"+f.cids.Canonical, "")
				if err != nil {
					return err.Error()
				}
				p := strs(m["providers"])
				if !has(p, hs[0].peer) || !has(p, hs[1].peer) {
					return fmt.Sprintf("providers %v, want both %s and %s", p, hs[0].peer, hs[1].peer)
				}
				return ""
			}, sweep)
			return
		}
		t.Fatal("no file shared by household1 and household2")
	})

	t.Run("KillAndRestart", func(t *testing.T) {
		// Fresh files household1 and household2 both have, that household3
		// has never looked up (nothing cached).
		var fresh []fileCIDs
		for k := 0; k < 6; k++ {
			p := filepath.Join(hs[0].lib, "Kill", fmt.Sprintf("Both %d.mkv", k))
			writeRandom(t, p, 300000)
			_ = os.MkdirAll(filepath.Join(hs[1].lib, "Kill"), 0o755)
			copyFile(t, p, filepath.Join(hs[1].lib, "Kill", fmt.Sprintf("Both %d.mkv", k)))
			fresh = append(fresh, hashFile(t, p))
		}
		for _, h := range hs[:2] {
			for _, f := range fresh {
				waiting.Until(t, h.svc+" ingests", func() string { return checkMeta(h, f.Canonical+"?local=1", f, nil) }, sweep)
			}
		}
		waiting.Until(t, "announced", func() string {
			for _, h := range hs[:2] {
				_, m, err := getJSON(h.url, "/api/status", h.token)
				if err != nil || m["provideQueue"] != float64(0) {
					return fmt.Sprintf("%s provideQueue %v %v", h.svc, m["provideQueue"], err)
				}
			}
			return ""
		}, sweep)
		_, before, _ := getJSON(hs[0].url, "/api/status", hs[0].token)
		// Kill household1's node and its Redis.
		for _, s := range []string{"household1", "redis1"} {
			if out, err := exec.Command("docker", "kill", c.container(s)).CombinedOutput(); err != nil {
				t.Fatalf("docker kill %s: %v %s", s, err, out)
			}
		}
		ok, total := 0, 0
		for k, f := range fresh {
			cid := f.all()[k%3] // canonical, sha2-256 and midhash in turn
			total++
			if e := checkMeta(hs[2], cid, f, []string{hs[1].peer}); e == "" {
				ok++
			} else {
				t.Logf("during the kill: %s", e)
			}
		}
		t.Logf("FIGURE lookup success rate during the kill window (first lookups from household3 of files household1 and household2 share, household1 killed): %d/%d", ok, total)
		if ok != total {
			t.Errorf("only %d of %d lookups succeeded while household1 was down", ok, total)
		}
		// A file only household1 has, added while it is down.
		newPath := filepath.Join(hs[0].lib, "Kill", "Added While Down (2020).mkv")
		writeRandom(t, newPath, 300000)
		added := hashFile(t, newPath)
		restart := time.Now()
		for _, s := range []string{"redis1", "household1"} {
			if out, err := exec.Command("docker", "start", c.container(s)).CombinedOutput(); err != nil {
				t.Fatalf("docker start %s: %v %s", s, err, out)
			}
		}
		c.waitHealthy(2*time.Minute, "household1")
		t.Logf("household1 healthy again %.1f s after docker start", time.Since(restart).Seconds())
		_, after, _ := getJSON(hs[0].url, "/api/status", hs[0].token)
		scan, _ := after["scan"].(map[string]any)
		t.Logf("household1 roots before %v, after restart %v; files hashed again by the restart scan: %v", before["roots"], after["roots"], scan["hashed"])
		if bf, _ := before["roots"].(float64); after["roots"] != bf+1 {
			t.Errorf("roots after restart %v, want %v + 1 (the records from the append-only file and the new file)", after["roots"], bf)
		}
		if h, _ := scan["hashed"].(float64); h > 1 {
			t.Errorf("the restart hashed %v files again; only the new one should be", h)
		}
		for _, h := range hs[1:] {
			for _, cid := range added.all() {
				waiting.Until(t, h.svc+" resolves the file added while household1 was down", func() string {
					return checkMeta(h, cid, added, []string{hs[0].peer})
				}, sweep)
			}
		}
		scanLibs()
		resolveAll("every CID after the restart")
	})

	t.Run("PartitionAndHeal", func(t *testing.T) {
		shared := c.project + "_shared"
		h1 := c.container("household1")
		if out, err := exec.Command("docker", "network", "disconnect", shared, h1).CombinedOutput(); err != nil {
			t.Fatalf("disconnect: %v %s", err, out)
		}
		// Changes on both sides: new files, a changed file, a new file on
		// household3's read-only mount (written on the host).
		writeRandom(t, filepath.Join(hs[0].lib, "Partition", "Cut Side (2021).mkv"), 300000)
		writeRandom(t, filepath.Join(hs[1].lib, "Partition", "Other Side (2022).mkv"), 300000)
		writeRandom(t, filepath.Join(hs[2].lib, "Movies", "Other Side Too (2023).mkv"), 300000)
		writeRandom(t, filepath.Join(hs[0].lib, "Movies", "Amber Lantern (2004).mkv"), 310000)
		writeRandom(t, filepath.Join(hs[1].lib, "Movies", "Bramble Tower (2005).mkv"), 320000)
		scanLibs()
		cut := hashFile(t, filepath.Join(hs[0].lib, "Partition", "Cut Side (2021).mkv"))
		time.Sleep(3 * time.Second)
		if code, _, _ := getJSON(hs[1].url, "/api/meta/"+cut.Canonical, ""); code == http.StatusOK {
			t.Errorf("household2 resolved household1's new file during the partition")
		}
		heal := time.Now()
		if out, err := exec.Command("docker", "network", "connect", "--alias", "household1", shared, h1).CombinedOutput(); err != nil {
			t.Fatalf("connect: %v %s", err, out)
		}
		d := resolveAll("converged after heal", waiting.Limit(3*time.Minute))
		_ = d
		t.Logf("FIGURE time to converge after heal (every household resolves every CID of %d files to the same key-set): %.1f s", len(files), time.Since(heal).Seconds())
	})

	t.Run("EmptyRedisReingests", func(t *testing.T) {
		c.must("stop", "-t", "2", "household2", "redis2")
		c.must("rm", "-f", "redis2")
		if out, err := exec.Command("docker", "volume", "rm", c.project+"_redis2").CombinedOutput(); err != nil {
			t.Fatalf("volume rm: %v %s", err, out)
		}
		p := filepath.Join(hs[1].lib, "Movies", "After The Wipe (2024).mkv")
		writeRandom(t, p, 300000)
		f := hashFile(t, p)
		c.must("up", "-d", "--no-recreate", "redis2", "household2")
		c.waitHealthy(2*time.Minute, "household2")
		n := len(libFiles(t, hs[1].lib))
		_, st, _ := getJSON(hs[1].url, "/api/status", hs[1].token)
		scan, _ := st["scan"].(map[string]any)
		t.Logf("household2 after an empty Redis: roots %v, hashed %v, library files %d", st["roots"], scan["hashed"], n)
		if st["roots"] != float64(n) {
			t.Errorf("roots %v, want %d", st["roots"], n)
		}
		for _, h := range []*household{hs[0], hs[2]} {
			for _, cid := range f.all() {
				waiting.Until(t, h.svc+" resolves the re-ingested household's new file", func() string {
					return checkMeta(h, cid, f, []string{hs[1].peer})
				}, sweep)
			}
		}
	})

	t.Run("ReadOnlyLibrary", func(t *testing.T) {
		out, err := exec.Command("docker", "inspect", "-f", `{{range .Mounts}}{{if eq .Destination "/library"}}{{.RW}}{{end}}{{end}}`, c.container("household3")).Output()
		if err != nil || strings.TrimSpace(string(out)) != "false" {
			t.Fatalf("household3's /library is not read-only: %q %v", out, err)
		}
		_, st, _ := getJSON(hs[2].url, "/api/status", hs[2].token)
		if scan, _ := st["scan"].(map[string]any); scan["errors"] != float64(0) {
			t.Errorf("household3 on a read-only mount: scan errors %v", scan["errors"])
		}
		// Its own files (one written on the host after start included) are
		// local records.
		for _, p := range libFiles(t, hs[2].lib) {
			f := hashFile(t, p)
			if e := checkMeta(hs[2], f.Canonical+"?local=1", f, nil); e != "" {
				t.Errorf("household3 (read-only mount): %s", e)
			}
		}
	})

	t.Run("Memory10k", func(t *testing.T) {
		n := 10000
		if s := os.Getenv("METAMESH_TESTNET_FILES"); s != "" {
			fmt.Sscan(s, &n)
		}
		_, st, _ := getJSON(hs[0].url, "/api/status", hs[0].token)
		base, _ := st["roots"].(float64)
		dir := filepath.Join(hs[0].lib, "Bulk")
		for k := 0; k < n; k++ {
			sub := filepath.Join(dir, fmt.Sprintf("d%02d", k%50))
			if k < 50 {
				_ = os.MkdirAll(sub, 0o755)
			}
			b := make([]byte, 4096)
			_, _ = rand.Read(b)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.bin", k)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		waiting.Until(t, "household1 ingests the bulk files", func() string {
			_, st, err := getJSON(hs[0].url, "/api/status", hs[0].token)
			if err != nil {
				return err.Error()
			}
			if r, _ := st["roots"].(float64); r < base+float64(n) {
				return fmt.Sprintf("roots %v of %v", r, base+float64(n))
			}
			return ""
		}, sweep, waiting.Limit(5*time.Minute))
		t.Logf("household1 ingested %d files of 4 KiB in %.1f s (over a bind mount, watching)", n, time.Since(start).Seconds())
		mem[fmt.Sprintf("after %d files on household1", n)] = dockerStats(t, nodeIDs())
		for k, v := range mem {
			t.Logf("FIGURE memory (docker stats, %s): %v", k, v)
		}
	})
}

// TestComposePrivate: a node with the wrong swarm key, or with the right
// key but on no allow-list, cannot join a private testnet.
func TestComposePrivate(t *testing.T) {
	t.Parallel()
	composeGate(t)
	c := newComposeNet(t, projectName("priv"), "testnet/compose/private.yml")
	dir, err := os.MkdirTemp("", "metamesh-private-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	keys, libs := filepath.Join(dir, "keys"), filepath.Join(dir, "libs")
	for _, k := range []string{"good", "bad"} {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		_ = os.MkdirAll(keys, 0o755)
		if err := os.WriteFile(filepath.Join(keys, k+".key"), []byte(fmt.Sprintf("/key/swarm/psk/1.0.0/\n/base16/\n%x\n", b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svcs := []string{"priv1", "priv2", "wrongkey", "outsider"}
	for _, s := range svcs {
		writeRandom(t, filepath.Join(libs, s, s+" only.mkv"), 300000)
	}
	c.env = []string{"KEYS=" + keys, "LIBS=" + libs}
	t.Cleanup(c.down)
	defer onInterrupt(c)()
	hs := map[string]*household{}
	for i, s := range svcs {
		hs[s] = &household{svc: s, peer: c.peerID(s), lib: filepath.Join(libs, s)}
		if i < 2 {
			c.env = append(c.env, fmt.Sprintf("P%d_PEER=%s", i+1, hs[s].peer))
		}
	}
	c.must("up", "-d")
	c.waitHealthy(3*time.Minute, svcs...)
	for _, h := range hs {
		h.url, h.token = c.apiURL(h.svc), c.token(h.svc)
	}
	f1 := hashFile(t, filepath.Join(libs, "priv1", "priv1 only.mkv"))
	// The members see each other.
	for _, cid := range f1.all() {
		waiting.Until(t, "priv2 resolves priv1's file", func() string {
			return checkMeta(hs["priv2"], cid, f1, []string{hs["priv1"].peer})
		}, sweep)
	}
	// Give the intruders time to try (they redial the bootstrap peer).
	time.Sleep(5 * time.Second)
	for _, s := range []string{"wrongkey", "outsider"} {
		h := hs[s]
		if code, m, _ := getJSON(h.url, "/api/meta/"+f1.Canonical, ""); code != http.StatusNotFound {
			t.Errorf("%s resolved priv1's file: %d %v", s, code, m)
		}
		_, m, err := getJSON(h.url, "/api/peers", h.token)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := m["peers"].([]any); len(p) != 0 {
			t.Errorf("%s is connected to %v", s, p)
		}
	}
	_, m, err := getJSON(hs["priv1"].url, "/api/peers", hs["priv1"].token)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m["peers"].([]any)
	if len(p) != 1 || p[0].(map[string]any)["id"] != hs["priv2"].peer {
		t.Errorf("priv1's peers %v, want only priv2 %s", p, hs["priv2"].peer)
	}
	t.Logf("private testnet: priv1 and priv2 federate; wrongkey (other swarm key) and outsider (not on the allow-list) have no peers and get 404")
}
