package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// Three `metamesh run` processes bootstrapped in a chain (C knows only B,
// B only A) answer each other's /api/meta/<cid> for every CID of every
// file; `metamesh id` gives a node's ID before it runs.
func TestRun_ThreeProcessesInAChain(t *testing.T) {
	t.Parallel()
	type proc struct {
		lib, data, api, p2p, id string
		hashes                  []map[string]any
	}
	procs := make([]*proc, 3)
	for i := range procs {
		p := &proc{data: storetest.Dir(t), api: freeAddr(t)}
		p.lib, _ = filepath.EvalSymlinks(t.TempDir())
		id, errOut, code := metamesh(t, nil, "id", "--create", "--data", p.data)
		if code != 0 || !strings.HasPrefix(id, "12D3KooW") {
			t.Fatalf("metamesh id: %d %q %s", code, id, errOut)
		}
		if again, _, _ := metamesh(t, nil, "id", "--data", p.data); again != id {
			t.Fatalf("metamesh id changed: %q then %q", id, again)
		}
		p.id = strings.TrimSpace(id)
		p.p2p = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
		for j := 0; j < 2; j++ { // one small file, one of two UnixFS chunks
			b := make([]byte, []int{4000, 300 << 10}[j])
			rand.Read(b)
			f := filepath.Join(p.lib, fmt.Sprintf("node%d-file%d.bin", i, j))
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, _ := metamesh(t, nil, "hash", f)
			var h map[string]any
			json.Unmarshal([]byte(out), &h)
			p.hashes = append(p.hashes, h)
		}
		procs[i] = p
	}
	for i, p := range procs {
		args := []string{"run", "--library", p.lib, "--data", p.data, "--api", p.api, "--listen", p.p2p, "--settle", "100ms", "--log-level", "warn"}
		if i > 0 {
			args = append(args, "--bootstrap", procs[i-1].p2p+"/p2p/"+procs[i-1].id)
		}
		cmd := exec.Command(binary, args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
	}
	for i, p := range procs {
		for j, q := range procs {
			for _, h := range q.hashes {
				for _, k := range []string{"ipfs", "sha2-256", "midhash256"} {
					cid := h[k].(string)
					var doc map[string]any
					waiting.Until(t, fmt.Sprintf("node %d to resolve node %d's %s %s", i, j, k, cid), func() string {
						out, _, code := metamesh(t, nil, "lookup", "--json", "--api", p.api, cid)
						if code == 0 && json.Unmarshal([]byte(out), &doc) == nil {
							return ""
						}
						return fmt.Sprintf("last exit %d", code)
					}, cliPoll)
					want := "local"
					if i != j {
						want = q.id
					}
					if doc["source"] != want {
						t.Errorf("node %d, %s of node %d: source %v, want %s", i, k, j, doc["source"], want)
					}
					var cids []string
					for _, c := range doc["cids"].([]any) {
						cids = append(cids, c.(string))
					}
					for _, kk := range []string{"ipfs", "sha2-256", "midhash256"} {
						if !slices.Contains(cids, h[kk].(string)) {
							t.Errorf("node %d, node %d's file: cids %v lack its %s", i, j, cids, kk)
						}
					}
				}
			}
		}
	}
	out, _, code := metamesh(t, nil, "peers", "--api", procs[1].api)
	shows := func(id string) bool { return regexp.MustCompile(`(?m)^` + peerCellRE(id) + ` `).MatchString(out) }
	if code != 0 || !shows(procs[0].id) || !shows(procs[2].id) {
		t.Errorf("metamesh peers on the middle node: %d %q", code, out)
	}
}
