package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "metamesh",
		Short:         "MetaMesh node: content IDs and metadata for a household media library",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return bindEnv(cmd)
		},
	}
	root.PersistentFlags().String("log-level", "info", "log level: debug, info, warn, error (env METAMESH_LOG_LEVEL)")
	root.PersistentFlags().String("log-format", "text", "log format: text or json (env METAMESH_LOG_FORMAT)")
	root.AddCommand(newVersionCmd(), newHashCmd(), newCIDCmd(), newFsckCmd(), newRunCmd(), newScanCmd(),
		newIDCmd(), newLookupCmd(), newSearchCmd(), newProvidersCmd(), newPeersCmd(), newStatusCmd(), newHealthCmd())
	// pflag writes every boolean flag as "--json[=true|false]"; the help
	// shows plain switches (the column stays aligned).
	cobra.AddTemplateFunc("plainBools", func(s string) string {
		return strings.ReplaceAll(s, "[=true|false]", strings.Repeat(" ", len("[=true|false]")))
	})
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages | trimTrailingWhitespaces", ".FlagUsages | plainBools | trimTrailingWhitespaces"))
	return root
}

// envName is the environment twin of a flag: --redis-url → METAMESH_REDIS_URL.
func envName(flag string) string {
	return "METAMESH_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// bindEnv sets every flag not given on the command line from its
// environment twin. List flags take comma-separated values.
func bindEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		v, ok := os.LookupEnv(envName(f.Name))
		if !ok || v == "" {
			return
		}
		vals := []string{v}
		if strings.HasSuffix(f.Value.Type(), "Slice") || strings.HasSuffix(f.Value.Type(), "Array") {
			vals = strings.Split(v, ",")
		}
		for _, x := range vals {
			if e := f.Value.Set(strings.TrimSpace(x)); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
				return
			}
		}
	})
	return err
}

// logger builds the slog logger from --log-level and --log-format.
func logger(cmd *cobra.Command, w io.Writer) (*slog.Logger, error) {
	lvlName, _ := cmd.Flags().GetString("log-level")
	format, _ := cmd.Flags().GetString("log-format")
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(lvlName)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", lvlName, err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
