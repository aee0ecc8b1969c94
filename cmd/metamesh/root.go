package main

import (
	"errors"
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
		Version:       versionText(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return bindEnv(cmd)
		},
	}
	root.PersistentFlags().String("log-level", "info", "log level: debug, info, warn, error (env METAMESH_LOG_LEVEL)")
	root.PersistentFlags().String("log-format", "text", "log format: text or json (env METAMESH_LOG_FORMAT)")
	root.AddCommand(newVersionCmd(), newHashCmd(), newCIDCmd(), newFsckCmd(), newRunCmd(), newScanCmd(),
		newIDCmd(), newLookupCmd(), newSearchCmd(), newGetCmd(), newProvidersCmd(), newPeersCmd(), newStatusCmd(), newHealthCmd(), newInviteCmd(), newStremioCmd(), newSetCmd(), newUnsetCmd(), newDuplicatesCmd(),
		newExportCmd(), newImportCmd())
	// pflag writes every boolean flag as "--json[=true|false]"; the help
	// shows plain switches (the column stays aligned).
	cobra.AddTemplateFunc("plainBools", func(s string) string {
		return strings.ReplaceAll(s, "[=true|false]", strings.Repeat(" ", len("[=true|false]")))
	})
	// A command with subcommands runs only to refuse an unknown one (see
	// checkUsage): its help shows "metamesh cid [command]" alone.
	tmpl := strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages | trimTrailingWhitespaces", ".FlagUsages | plainBools | trimTrailingWhitespaces")
	tmpl = strings.Replace(tmpl, "{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1)
	root.SetUsageTemplate(tmpl)
	// --version prints what `metamesh version` prints.
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(usageError)
	root.InitDefaultCompletionCmd() // so that the walk below sees it
	checkUsage(root)
	return root
}

// checkUsage makes every usage mistake an error with exit status 2 that
// is followed by the command's usage line: a wrong number of arguments,
// and an unknown subcommand of any command that has subcommands (cobra
// would only print the help and exit 0 for all but the root).
func checkUsage(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return errors.New(msg)
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError(cmd, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		checkUsage(sub)
	}
}

// usageError is err, a mistake in how cmd was called, with exit status 2
// and cmd's usage line.
func usageError(cmd *cobra.Command, err error) error {
	return &exitError{code: 2, err: err, usage: usageLine(cmd)}
}

// usageLine is what main prints after a usage error.
func usageLine(cmd *cobra.Command) string {
	line := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		line = cmd.CommandPath() + " COMMAND"
	}
	return fmt.Sprintf("Usage: %s\nRun '%s --help' for more.", line, cmd.CommandPath())
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
