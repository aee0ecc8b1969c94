package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}

// versionText is what `metamesh version` and `metamesh --version` print.
func versionText() string {
	return fmt.Sprintf("metamesh %s (%s %s/%s)", node.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
