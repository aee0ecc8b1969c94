package main

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/store/storetest"
)

// metamesh set corrects a file of the household's, by the file itself,
// and unset brings back what its name says; the node's own fields are
// refused with the node's reason.
func TestSet_AndUnset(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	clip := filepath.Join(lib, "clip_1964.mp4")
	data := make([]byte, 30<<10)
	rand.Read(data)
	if err := os.WriteFile(clip, data, 0o644); err != nil {
		t.Fatal(err)
	}
	api := freeAddr(t)
	startRun(t, storetest.Dir(t), api, "--library", lib, "--listen", "/ip4/127.0.0.1/tcp/0")
	waiting.Until(t, "the node to be ready", func() string {
		resp, err := http.Get("http://" + api + "/ready")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return ""
	})

	out, errOut, code := metamesh(t, nil, "set", "--api", api, clip, "titles/eng=Grandma's birthday", "videoType=other")
	if code != 0 || !strings.Contains(out, "title     Grandma's birthday\n") || !strings.Contains(out, "edited    titles/eng, videoType\n") {
		t.Errorf("set: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = metamesh(t, nil, "unset", "--api", api, clip, "titles/eng")
	if code != 0 || strings.Contains(out, "Grandma") || !strings.Contains(out, "edited    videoType\n") {
		t.Errorf("unset: exit %d %s\n%s", code, errOut, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"set", clip, "filePath=/x"}, 1, `"filePath"`},
		{[]string{"set", clip, "no-equals-sign"}, 2, "FIELD=VALUE"},
		{[]string{"set", "bafkreiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "a=b"}, 3, "no file"},
	} {
		_, errOut, code := metamesh(t, nil, append(tc.args, "--api", api)...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%q: exit %d %q, want %d saying %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
}
