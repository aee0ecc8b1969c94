package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/metamesh/node/node/stremio"
)

// TestStremioCmd: metamesh stremio prints the add-on's URL of a node off
// loopback (at --host, its token in the path), which Stremio installs
// from; for a node on loopback it says only this machine reaches it.
func TestStremioCmd(t *testing.T) {
	t.Parallel()
	data, port, loopData, loopAPI := offAndOnLoopback(t)

	out, errOut, code := metamesh(t, nil, "stremio", "--data", data, "--host", "127.0.0.1", "--json")
	var l stremio.Link
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || len(l.URLs) != 1 {
		t.Fatalf("stremio --json: exit %d %s %v\n%s", code, errOut, err, out)
	}
	if !regexp.MustCompile(fmt.Sprintf(`^http://127\.0\.0\.1:%d/stremio/[0-9a-f]{32}/manifest\.json$`, port)).MatchString(l.URLs[0]) {
		t.Errorf("--host 127.0.0.1: URL %q", l.URLs[0])
	}
	resp, err := http.Get(l.URLs[0])
	if err != nil {
		t.Fatal(err)
	}
	var man stremio.Manifest
	err = json.NewDecoder(resp.Body).Decode(&man)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || !strings.HasPrefix(man.ID, "org.metamesh.") {
		t.Errorf("the URL's manifest: %s %v %+v", resp.Status, err, man)
	}
	out, errOut, code = metamesh(t, nil, "stremio", "--data", data, "--host", "nas.lan")
	if want := fmt.Sprintf("  http://nas.lan:%d/stremio/", port); code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "Anyone who has the URL") {
		t.Errorf("stremio --host nas.lan: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = metamesh(t, nil, "stremio", "--data", loopData)
	if code != 0 || !strings.Contains(out, "only this machine reaches") || !strings.Contains(out, "  http://"+loopAPI+"/stremio/manifest.json") {
		t.Errorf("stremio on loopback: exit %d %s\n%s", code, errOut, out)
	}
}
