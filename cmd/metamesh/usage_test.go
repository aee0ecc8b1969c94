package main

import (
	"strings"
	"testing"
)

// TestUsageErrors: an unknown command, at any level, an unknown flag or a
// wrong number of arguments is a usage error: exit status 2, the error,
// then the command's usage line, and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args      []string
		wantErr   string
		wantUsage string
	}{
		{[]string{"cid", "bogus"}, `unknown command "bogus" for "metamesh cid"`, "Usage: metamesh cid COMMAND"},
		{[]string{"cid", "inpsect", "x"}, `unknown command "inpsect" for "metamesh cid" (did you mean "inspect"?)`, "Usage: metamesh cid COMMAND"},
		{[]string{"bogus"}, `unknown command "bogus" for "metamesh"`, "Usage: metamesh COMMAND"},
		{[]string{"completion", "bogus"}, `unknown command "bogus" for "metamesh completion"`, "Usage: metamesh completion COMMAND"},
		{[]string{"version", "bogus"}, `unknown command "bogus" for "metamesh version"`, "Usage: metamesh version [flags]"},
		{[]string{"lookup"}, "accepts 1 arg(s), received 0", "Usage: metamesh lookup CID|FILE [flags]"},
		{[]string{"providers", "a", "b"}, "accepts 1 arg(s), received 2", "Usage: metamesh providers CID [flags]"},
		{[]string{"cid", "inspect"}, "accepts 1 arg(s), received 0", "Usage: metamesh cid inspect CID|FILE [flags]"},
		{[]string{"cid", "canonical"}, "requires at least 1 arg(s), only received 0", "Usage: metamesh cid canonical CID... [flags]"},
		{[]string{"lookup", "--bogus", "x"}, "unknown flag: --bogus", "Usage: metamesh lookup CID|FILE [flags]"},
		{[]string{"run", "--workers", "many"}, `invalid argument "many" for "--workers"`, "Usage: metamesh run --library DIR"},
		// A value of the right type that the node refuses is one too.
		{[]string{"run", "--library", "/nonexistent/lib", "--data", "/nonexistent/data"}, `config: library "/nonexistent/lib" does not exist (--library)`, "Usage: metamesh run --library DIR"},
		{[]string{"run", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--workers", "-3"}, "config: --workers -3: may not be negative", "Usage: metamesh run --library DIR"},
		{[]string{"run", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--share-rate", "0.5"}, `--share-rate: "0.5" is 0.5 bytes a second, under 1: the rate is in bytes a second, so for 0.5 MB/s write 0.5M (0 is unlimited)`, "Usage: metamesh run --library DIR"},
		{[]string{"run", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--art-cache", "lots"}, `--art-cache: "lots" is not a size: want bytes, such as 200M, 500MiB or 1GiB`, "Usage: metamesh run --library DIR"},
		{[]string{"run", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--art-cache", "1M/s"}, `--art-cache: "1M/s" is a rate: want a size such as 200M or 1GiB`, "Usage: metamesh run --library DIR"},
		{[]string{"run", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--transcode-cache", "lots"}, `--transcode-cache: "lots" is not a size: want bytes, such as 200M, 500MiB or 1GiB`, "Usage: metamesh run --library DIR"},
		{[]string{"scan", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--lookup-timeout", "-1s"}, "unknown flag: --lookup-timeout", "Usage: metamesh scan --library DIR"},
		{[]string{"scan", "--library", ".", "--redis-url", "redis://127.0.0.1:1", "--workers", "-1"}, "config: --workers -1: may not be negative", "Usage: metamesh scan --library DIR"},
		// What the node would refuse in its API's words (q=, limit=) is
		// refused before it is asked, in the command's.
		{[]string{"search", ""}, "search needs at least one word: metamesh search WORD...", "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", "  ", " "}, "search needs at least one word: metamesh search WORD...", "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", "?!", "..."}, `search needs at least one word, a letter or a digit: "?! ..." holds none`, "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", strings.Repeat("long ", 60)}, "the words to search are 300 bytes long, at most 256", "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", "--limit", "0", "film"}, "--limit 0: want from 1 to 100 hits", "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", "--limit", "500", "film"}, "--limit 500: want from 1 to 100 hits", "Usage: metamesh search WORD... [flags]"},
		{[]string{"search", "--limit", "-1", "film"}, "--limit -1: want from 1 to 100 hits", "Usage: metamesh search WORD... [flags]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, tt.args...)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			if !strings.HasPrefix(errOut, "metamesh: "+tt.wantErr) || !strings.Contains(errOut, "\n"+tt.wantUsage) {
				t.Errorf("stderr %q; want %q, then %q", errOut, tt.wantErr, tt.wantUsage)
			}
		})
	}
	// Without a subcommand, a command that has some shows its help.
	out, _, code := metamesh(t, nil, "cid")
	if code != 0 || !strings.Contains(out, "metamesh cid [command]") || !strings.Contains(out, "inspect") {
		t.Errorf("metamesh cid: exit %d, stdout %q; want its help", code, out)
	}
}

// TestVersionFlag: --version prints what the version command prints.
func TestVersionFlag(t *testing.T) {
	want, _, code := metamesh(t, nil, "version")
	if code != 0 || !strings.HasPrefix(want, "metamesh ") {
		t.Fatalf("metamesh version: exit %d, %q", code, want)
	}
	out, errOut, code := metamesh(t, nil, "--version")
	if code != 0 || out != want {
		t.Errorf("metamesh --version: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
}
