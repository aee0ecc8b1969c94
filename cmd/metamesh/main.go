package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/metamesh/node/node"
)

func main() {
	// The first SIGINT or SIGTERM cancels ctx, and every command winds down
	// through it. The signals then get their default behaviour back, so a
	// second one ends the process even if something is stuck where no
	// context reaches.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := Run(ctx, os.Args[1:])
	stop()
	if err != nil {
		// An error may quote a file name or a peer's answer: escaped as
		// what the commands print is.
		stderr := controlEscaper{w: os.Stderr}
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil {
				fmt.Fprintln(stderr, "metamesh:", ee.err)
			}
			if ee.usage != "" {
				fmt.Fprintln(stderr, ee.usage)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(stderr, "metamesh:", err)
		os.Exit(1)
	}
}

// Run executes the command line args.
func Run(ctx context.Context, args []string) error {
	root := newRootCmd()
	// What the commands print comes from file names and peers' records:
	// no control character of theirs reaches the terminal.
	root.SetOut(controlEscaper{w: os.Stdout})
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if errors.Is(err, node.ErrConfig) {
		// A value of the right type that the node refuses is a mistake
		// in how the command was called too.
		return usageError(cmd, err)
	}
	return err
}

// exitError carries a specific exit status, and for a usage error (code
// 2) the usage line printed after the error.
type exitError struct {
	code  int
	err   error
	usage string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
