package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

const unitFile = "../../deploy/systemd/metamesh.service"

// The service unit passes systemd-analyze verify, with the binary it
// starts in place: a root holding the unit under /etc/systemd/system,
// the machine's own system units (the targets it names) and an
// executable at ExecStart's path. verify exits 0 on unknown keys and
// bad values too, only printing them: any output fails the test.
func TestSystemdUnit_Verifies(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is missing (make deps-test installs it): ", err)
	}
	var units string
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(d, "multi-user.target")); err == nil {
			units = d
			break
		}
	}
	if units == "" {
		t.Fatal("no systemd system units (multi-user.target) on this machine")
	}
	root := t.TempDir()
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := unitValues(t, "ExecStart")[0]
	bin := strings.Fields(exe)[0]
	for _, c := range []struct {
		from, to string
	}{
		{self, filepath.Join(root, bin)},
		{units, filepath.Join(root, "usr/lib/systemd/system")},
	} {
		if err := os.MkdirAll(filepath.Dir(c.to), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", c.from, c.to).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v: %s", c.from, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/systemd/system/metamesh.service"), unit, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--root="+root, "metamesh.service").CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The unit is what INSTALL.md says it is: a notify service of its own
// user, restarted on failure, its data in /var/lib/metamesh, settings
// from the environment file, the rest of the system read-only.
func TestSystemdUnit_Settings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, want string }{
		{"Type", "notify"},
		{"User", "metamesh"},
		{"Restart", "on-failure"},
		{"StateDirectory", "metamesh"},
		{"Environment", "METAMESH_DATA=/var/lib/metamesh"},
		{"EnvironmentFile", "-/etc/metamesh/metamesh.env"},
		{"ExecStart", "/usr/local/bin/metamesh run"},
		{"NoNewPrivileges", "yes"},
		{"ProtectSystem", "strict"},
		{"ProtectHome", "read-only"},
		{"PrivateTmp", "yes"},
		{"WantedBy", "multi-user.target"},
	} {
		if got := unitValues(t, tc.key); !slices.Contains(got, tc.want) {
			t.Errorf("%s=%q, want %q among them", tc.key, got, tc.want)
		}
	}
}

// Every variable the example environment file sets, or shows commented
// out, is one a flag of metamesh run reads.
func TestSystemdEnvFile_NamesRealVariables(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../deploy/systemd/metamesh.env")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{}
	note := func(fl *pflag.Flag) { known[envName(fl.Name)] = true }
	newRunCmd().Flags().VisitAll(note)
	newRootCmd().PersistentFlags().VisitAll(note)
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "#")
		name, _, ok := strings.Cut(l, "=")
		if !ok || !strings.HasPrefix(name, "METAMESH_") || strings.ContainsAny(name, " \t") {
			continue
		}
		seen++
		if !known[name] {
			t.Errorf("metamesh.env names %s, which no flag of metamesh run reads", name)
		}
	}
	if seen == 0 || !known["METAMESH_LIBRARY"] {
		t.Errorf("metamesh.env names %d variables", seen)
	}
}

// unitValues is every value of key in the unit file, in order.
func unitValues(t *testing.T, key string) []string {
	t.Helper()
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && k == key {
			out = append(out, v)
		}
	}
	return out
}
