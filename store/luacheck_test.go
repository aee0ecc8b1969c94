package store

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestLuacheckrcCoversTheScripts: .luacheckrc (make lint's luacheck
// configuration) names every script of store/lua by the kind newScript
// composes it as (read and bare scripts with common.lua alone, every
// other one as a write script), and names no
// script that does not exist (TestLuaFilesUsedOnce checks that every
// embedded script is used).
func TestLuacheckrcCoversTheScripts(t *testing.T) {
	rc, err := os.ReadFile("../.luacheckrc")
	if err != nil {
		t.Fatal(err)
	}
	listed := func(std string) []string {
		re := regexp.MustCompile(`for _, f in ipairs\(\{([^}]*)\}\) do\s*files\["store/lua/" \.\. f \.\. "\.lua"\] = \{std = "` + regexp.QuoteMeta(std) + `"\}`)
		m := re.FindSubmatch(rc)
		if m == nil {
			t.Fatalf(".luacheckrc has no list of scripts with std %q", std)
		}
		var out []string
		for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
			out = append(out, string(q[1])+".lua")
		}
		slices.Sort(out)
		return out
	}
	byKind := map[luaKind][]string{}
	for file, kinds := range luaUses {
		for _, k := range kinds {
			if !slices.Contains(byKind[k], file) {
				byKind[k] = append(byKind[k], file)
			}
		}
	}
	want := append(slices.Clone(byKind[luaRead]), byKind[luaBare]...)
	slices.Sort(want)
	if got := listed("lua51+redis+codes+common"); !slices.Equal(got, want) {
		t.Errorf(".luacheckrc's read and bare scripts %q, the store's %q", got, want)
	}
}
