package main

import (
	"runtime/debug"
	"testing"
)

// The commit a binary reports comes from what the go command stamped.
func TestCommitOf(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "unknown"},
		{"built outside a checkout", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}}}, "unknown"},
		{"a clean checkout", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}}, "0123456789ab"},
		{"uncommitted changes", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}}, "0123456789ab+dirty"},
		{"a short revision", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commitOf(tc.info); got != tc.want {
				t.Errorf("commitOf = %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := versionLine("v0.3.0", "0123456789ab", "go1.26.8", "linux/arm64"), "metamesh v0.3.0 (commit 0123456789ab, go1.26.8 linux/arm64)"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
}
