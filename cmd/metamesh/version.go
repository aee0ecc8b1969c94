package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from, the Go version and the platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}

// versionText is what `metamesh version` and `metamesh --version` print.
func versionText() string {
	commit := node.Commit
	if commit == "" {
		info, _ := debug.ReadBuildInfo()
		commit = commitOf(info)
	}
	return versionLine(node.Version, commit, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// versionLine is the version line: "metamesh v0.3.0 (commit
// 0123456789ab, go1.26.8 linux/arm64)".
func versionLine(version, commit, goVersion, platform string) string {
	return fmt.Sprintf("metamesh %s (commit %s, %s %s)", version, commit, goVersion, platform)
}

// commitOf is the commit the go command stamped into a binary built
// from a git checkout without node.Commit: its first 12 hex digits,
// "+dirty" when the checkout had uncommitted changes, "unknown" when
// there is no stamp (go test, a module download, -buildvcs=false).
func commitOf(info *debug.BuildInfo) string {
	if info == nil {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	rev = rev[:min(12, len(rev))]
	if dirty {
		rev += "+dirty"
	}
	return rev
}
