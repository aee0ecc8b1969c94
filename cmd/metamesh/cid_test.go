package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

// makeCID is the canonical string of a CIDv1 over n bytes of fill.
func makeCID(t *testing.T, codec, code uint64, n int, fill byte) string {
	t.Helper()
	mh, err := multihash.Encode(bytes.Repeat([]byte{fill}, n), code)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(codec, mh).String()
}

// TestCIDCanonical_Arguments: every argument must be a CID; any valid one
// competes in its canonical form.
func TestCIDCanonical_Arguments(t *testing.T) {
	mid := "bagacbabaecxvk4hvugaqw6xxrsxuxrykmyhq35i6ik5pshkn4wzdfdpa5a67y"
	sha := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	v0 := "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"
	v0norm, err := protocol.Normalize(v0)
	if err != nil {
		t.Fatal(err)
	}
	b58, err := cid.MustParse(sha).StringOfBase(multibase.Base58BTC)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantOut    string
		wantErrOut []string // each must appear on stderr
		wantCode   int
	}{
		{"valid", []string{mid, sha}, sha + "\n", nil, 0},
		{"garbage first", []string{"foo", sha}, "", []string{`argument 1: invalid CID "foo"`}, 2},
		{"garbage last", []string{sha, "not-a-cid"}, "", []string{`argument 2: invalid CID "not-a-cid"`}, 2},
		{"every bad one named", []string{"foo", mid, ""}, "", []string{`argument 1: invalid CID "foo"`, "argument 3: empty CID", "2 of 3 arguments"}, 2},
		{"only garbage", []string{"zzz"}, "", []string{`argument 1: invalid CID "zzz"`}, 2},
		{"CIDv0 competes as its CIDv1", []string{mid, v0}, v0norm + "\n", nil, 0},
		{"base58 CIDv1 is normalised", []string{b58, mid}, sha + "\n", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append([]string{"cid", "canonical"}, tt.args...)...)
			if code != tt.wantCode || out != tt.wantOut {
				t.Errorf("out %q code %d; want %q code %d (stderr %q)", out, code, tt.wantOut, tt.wantCode, errOut)
			}
			for _, w := range tt.wantErrOut {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q, want it to contain %q", errOut, w)
				}
			}
		})
	}
}

// TestCIDInspect_JSONErrors: with --json an error is one JSON object on
// stderr and nothing on stdout; without it, text.
func TestCIDInspect_JSONErrors(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantError string // in the error text
		wantCode  int
	}{
		{"invalid", []string{"--json", "BAD"}, `invalid CID "BAD"`, 2},
		{"invalid, flag after", []string{"BAD", "--json"}, `invalid CID "BAD"`, 2},
		{"empty", []string{"--json", ""}, "empty CID", 2},
		{"no argument", []string{"--json"}, "accepts 1 arg", 2},
		{"two arguments", []string{"--json", "a", "b"}, "accepts 1 arg", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append([]string{"cid", "inspect"}, tt.args...)...)
			if code != tt.wantCode || out != "" {
				t.Errorf("out %q code %d; want nothing and code %d", out, code, tt.wantCode)
			}
			var got map[string]string
			dec := json.NewDecoder(strings.NewReader(errOut))
			if err := dec.Decode(&got); err != nil || dec.More() {
				t.Fatalf("stderr %q is not one JSON object (%v)", errOut, err)
			}
			if len(got) != 1 || !strings.Contains(got["error"], tt.wantError) {
				t.Errorf("stderr %v, want only an error containing %q", got, tt.wantError)
			}
		})
	}
	t.Run("text without --json", func(t *testing.T) {
		out, errOut, code := metamesh(t, nil, "cid", "inspect", "BAD")
		if code != 2 || out != "" || !strings.HasPrefix(errOut, `metamesh: invalid CID "BAD"`) {
			t.Errorf("out %q err %q code %d; want a text error and code 2", out, errOut, code)
		}
	})
}

// TestCIDInspect_Tiers: inspect names every tier, and says why a digest
// of the wrong length ranks 0.
func TestCIDInspect_Tiers(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantTier    string
		wantRank    int
		wantProblem string
	}{
		{"usenet posting", makeCID(t, protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32, 1), "usenet-posting", 25, ""},
		{"url locator", makeCID(t, protocol.CodeURL, protocol.CodeIdentity, 19, 'u'), "opaque-locator", 5, ""},
		{"short sha2-256", makeCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 16, 1), "other", 0, "sha2-256 digest is 16 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, "cid", "inspect", "--json", tt.in)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got protocol.Info
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if got.Tier != tt.wantTier || got.Rank != tt.wantRank || got.Problem != tt.wantProblem {
				t.Errorf("tier %q rank %d problem %q; want %q %d %q", got.Tier, got.Rank, got.Problem, tt.wantTier, tt.wantRank, tt.wantProblem)
			}
			text, _, _ := metamesh(t, nil, "cid", "inspect", tt.in)
			if got := textField(text, "tier"); got != tt.wantTier {
				t.Errorf("text output tier %q, want %q", got, tt.wantTier)
			}
			if tt.wantProblem != "" && !strings.Contains(text, tt.wantProblem) {
				t.Errorf("text output %q does not say %q", text, tt.wantProblem)
			}
		})
	}
}

// textField is the value of the first line of inspect's text output that
// starts with name.
func textField(text, name string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestCID_BadCIDMessages: inspect and canonical say why an argument is not
// a CID in the same words, without go-cid's decoder jargon or its
// repeated "invalid cid:".
func TestCID_BadCIDMessages(t *testing.T) {
	sha := "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
	tests := []struct {
		arg, want string
	}{
		{"foo", `invalid CID "foo": the text after the multibase prefix "f" is not valid base16`},
		{"bar", `invalid CID "bar": too short to be a CID`},
		{"garbage", `invalid CID "garbage": "g" is not a multibase prefix`},
		{"Qm123", `invalid CID "Qm123": a CIDv0 (Qm…) is 46 characters, this one 5`},
		{sha[:len(sha)-2], `invalid CID "` + sha[:len(sha)-2] + `": its digest is shorter than its multihash says`},
		{"", "empty CID"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, inspectErr, code := metamesh(t, nil, "cid", "inspect", tt.arg)
			if code != 2 || !strings.HasPrefix(inspectErr, "metamesh: "+tt.want) {
				t.Errorf("cid inspect %q: exit %d, stderr %q; want 2 and %q", tt.arg, code, inspectErr, tt.want)
			}
			_, canonErr, code := metamesh(t, nil, "cid", "canonical", sha, tt.arg)
			if code != 2 || !strings.Contains(canonErr, "argument 2: "+tt.want) {
				t.Errorf("cid canonical: exit %d, stderr %q; want 2 and %q", code, canonErr, tt.want)
			}
			for _, jargon := range []string{"invalid cid:", "encoding/hex", "varint"} {
				if strings.Contains(inspectErr+canonErr, jargon) {
					t.Errorf("stderr says %q:\n%s%s", jargon, inspectErr, canonErr)
				}
			}
		})
	}
}

// TestCIDOrFile: lookup and cid inspect take a file where a CID goes: it
// is hashed as metamesh hash hashes it, the command says on stderr which
// CID it gave, and goes on with its canonical CID. An argument that is
// neither a CID nor a file is refused before any node is asked, with
// exit status 2, in words that point at metamesh hash: a path that does
// not exist by what is wrong with it, anything else by why it is not a
// CID; a directory is not one file.
func TestCIDOrFile(t *testing.T) {
	dir := t.TempDir()
	film := filepath.Join(dir, "film.mkv")
	if err := os.WriteFile(film, bytes.Repeat([]byte("film"), 100_000), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := metamesh(t, nil, "hash", film)
	var h struct{ Canonical string }
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil {
		t.Fatalf("hash: exit %d, %q (%v)", code, out, err)
	}
	out, errOut, code := metamesh(t, nil, "cid", "inspect", film)
	if code != 0 || errOut != "hashed "+film+": "+h.Canonical+"\n" || textField(out, "normalized") != h.Canonical {
		t.Errorf("cid inspect FILE: exit %d, stderr %q, stdout:\n%s\nwant it hashed to %s", code, errOut, out, h.Canonical)
	}

	missing := filepath.Join(dir, "no-such", "film.mkv")
	tests := []struct {
		arg, want string
	}{
		{missing, missing + ": no such file or directory, and it is not a CID: give a file's path or a CID (metamesh hash FILE prints a file's CIDs)"},
		{"./film.mkv", "./film.mkv: no such file or directory, and it is not a CID"},
		{"garbage", `invalid CID "garbage": "g" is not a multibase prefix: a CIDv1 starts with one (b for base32, z for base58btc, f for hex…), a CIDv0 with Qm; nor is it a file here (metamesh hash FILE prints a file's CIDs)`},
		{dir, dir + " is a directory: give one file or a CID (metamesh hash " + dir + " prints the CIDs of its files)"},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"lookup", "--api", "127.0.0.1:1"}, {"cid", "inspect"}} {
			t.Run(cmd[0]+" "+tt.arg, func(t *testing.T) {
				out, errOut, code := metamesh(t, nil, append(cmd, tt.arg)...)
				if code != 2 || out != "" || !strings.HasPrefix(errOut, "metamesh: "+tt.want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, and %q", code, out, errOut, tt.want)
				}
			})
		}
	}
}
