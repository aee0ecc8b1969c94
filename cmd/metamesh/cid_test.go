package main

import (
	"bytes"
	"encoding/json"
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
