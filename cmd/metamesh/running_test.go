package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/store/storetest"
)

// TestRun_SecondNodeSaysWhoRuns: beside a node that `make run` started on
// the default data directory, a second start says up front who holds
// what it needs, and how to reach or avoid it, instead of "bind: address
// already in use": on the same data directory (make run again, or
// metamesh run on other ports), that a node runs there and its API; on
// another data directory but the same API address, that the address is
// another node's and which; an API address or a peer port another
// program holds, which flag and variable choose another. The running
// node is left as it was.
func TestRun_SecondNodeSaysWhoRuns(t *testing.T) {
	t.Parallel()
	root, bin := makeRoot(t)
	xdg := storetest.Dir(t)
	env := []string{"XDG_DATA_HOME=" + xdg}
	data := filepath.Join(xdg, "metamesh")
	lib := t.TempDir()
	api, p2pPort := freeAddr(t), freePort(t)
	listen := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", p2pPort)
	mk := startMakeRun(t, root, bin, lib, api, listen, env)
	waitReady(t, mk, api)
	id := nodeID(t, data)
	apiURL, _ := os.ReadFile(filepath.Join(data, "api.url"))

	taken, err := net.Listen("tcp", "127.0.0.1:0") // a program that is no node
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	go func() {
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	here := "metamesh: a node already runs on this data directory, " + data + " (API http://" + api + "): metamesh status reaches it; stop it first (Ctrl-C where it runs) to start it again"
	// The same directory by another name: the node is found all the
	// same, and the way to reach it names the directory as given.
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	otherListen := func() string { return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)) }
	run := func(args ...string) []string {
		return append([]string{binary, "run", "--library", lib}, args...)
	}
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"make run again", []string{"make", "-s", "-C", root, "run", "GO=true", "BIN=" + bin, "LIBRARY=" + lib, "API=" + api, "LISTEN=" + listen},
			here},
		{"run on other ports", run("--api", freeAddr(t), "--listen", otherListen()),
			here},
		{"run with --data on other ports", run("--data", data, "--api", freeAddr(t), "--listen", otherListen()),
			here},
		{"run with --data, named otherwise", run("--data", link, "--api", freeAddr(t), "--listen", otherListen()),
			"metamesh: a node already runs on this data directory, " + link + " (API http://" + api + "): metamesh status --data " + link + " reaches it; stop it first (Ctrl-C where it runs) to start it again"},
		{"another data directory, the same API address", run("--data", storetest.Dir(t), "--api", api, "--listen", otherListen()),
			"metamesh: the API address " + api + " is another node's (peer " + id + "; metamesh status --api http://" + api + " reaches it): a second node on this machine needs --api, --listen and --data of its own (make run API=… LISTEN=… DATA=…)"},
		{"an API address another program holds", run("--data", storetest.Dir(t), "--api", taken.Addr().String(), "--listen", otherListen()),
			"metamesh: api: cannot listen on " + taken.Addr().String() + ": address already in use, by another program: give the node another address with --api (env METAMESH_API; make run API=…)"},
		{"the same peer port", run("--data", storetest.Dir(t), "--api", freeAddr(t), "--listen", listen),
			"metamesh: p2p: cannot listen on " + listen + " (--listen): address already in use; another node? give this one a port of its own with --listen (env METAMESH_LISTEN; make run LISTEN=…)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.args[0], tt.args[1:]...)
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("a second node started:\n%s", out)
			}
			if !strings.Contains(string(out), tt.says+"\n") || strings.Contains(string(out), "bind: address already in use") {
				t.Errorf("it said:\n%s\nwant the line %q", out, tt.says)
			}
		})
	}

	// The running node still answers, at the address it wrote.
	if now, _ := os.ReadFile(filepath.Join(data, "api.url")); string(now) != string(apiURL) {
		t.Errorf("api.url is %q, was %q", now, apiURL)
	}
	if out, errOut, code := metamesh(t, env, "id"); code != 0 || strings.TrimSpace(out) != id {
		t.Errorf("metamesh id: exit %d, %q %s", code, out, errOut)
	}
	if _, errOut, code := metamesh(t, env, "health"); code != 0 {
		t.Errorf("the running node is no longer healthy: %s", errOut)
	}
}
