package protocol_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

// TestSearchTokenKeyVector checks testdata/search-token-keys.tsv, the
// vector other implementations derive their keys against: every text
// cuts into the listed tokens, in order; each key is what SearchTokenKey
// gives and what sha2-256 of the prefix, 0x00 and the token gives,
// computed here without the package; "-" tokens carry no key.
func TestSearchTokenKeyVector(t *testing.T) {
	f, err := os.Open("testdata/search-token-keys.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tokens := map[string][]string{}
	var texts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			t.Fatalf("line %q: want 3 tab-separated fields", line)
		}
		text, tok, key := parts[0], parts[1], parts[2]
		if _, ok := tokens[text]; !ok {
			texts = append(texts, text)
		}
		tokens[text] = append(tokens[text], tok)
		if key == "-" {
			if protocol.Keyed(tok) {
				t.Errorf("%q: the vector gives it no key, Keyed says it has one", tok)
			}
			continue
		}
		if !protocol.Keyed(tok) {
			t.Errorf("%q: the vector gives it a key, Keyed says none", tok)
		}
		c, err := cid.Decode(key)
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		dec, err := multihash.Decode(c.Hash())
		if err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(append([]byte("metamesh/search-token/1\x00"), tok...))
		if c.Version() != 1 || c.Type() != cid.Raw || dec.Code != multihash.SHA2_256 || !bytes.Equal(dec.Digest, want[:]) {
			t.Errorf("%q: key %s is not CIDv1 raw of sha2-256(prefix 0x00 token)", tok, key)
		}
		if got := protocol.SearchTokenKey(tok).String(); got != key {
			t.Errorf("SearchTokenKey(%q) = %s, the vector says %s", tok, got, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(texts) < 10 {
		t.Fatalf("the vector holds %d texts", len(texts))
	}
	for _, text := range texts {
		if got := protocol.Tokens(text); !reflect.DeepEqual(got, tokens[text]) {
			t.Errorf("Tokens(%q) = %q, the vector says %q", text, got, tokens[text])
		}
	}
}

func TestKeyed(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		want bool
	}{
		{"heat", true}, {"lighthouse", true}, {"her", true}, {"tt0113277", true}, {"603", true},
		{"東京物語", true}, {"éte", true}, {"2100", true}, {"1879", true}, {"12345", true},
		{"a", false}, {"up", false}, {"", false}, {"東京", false},
		{"the", false}, {"les", false}, {"und", false}, {"del", false},
		{"1995", false}, {"1880", false}, {"2099", false},
		{"s01", false}, {"e07", false}, {"s01e07", false}, {"s2024e100", false},
		{"720p", false}, {"1080i", false}, {"2160p", false}, {"x264", false}, {"hevc", false}, {"mkv", false}, {"bluray", false},
		{"pop", true}, {"ip", false}, {"p", false},
	} {
		if got := protocol.Keyed(tc.tok); got != tc.want {
			t.Errorf("Keyed(%q) = %v, want %v", tc.tok, got, tc.want)
		}
	}
}

func TestKeyedTokens(t *testing.T) {
	got := protocol.KeyedTokens(protocol.Tokens("The Heat of the Night: Heat 1995 S01E02 1080p"))
	if want := []string{"heat", "night"}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeyedTokens = %q, want %q", got, want)
	}
}

func FuzzSearchTokenKey(f *testing.F) {
	for _, s := range []string{"", "heat", "s01e02", "東京物語", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range protocol.Tokens(text) {
			if len(tok) > protocol.MaxTokenLen {
				t.Fatalf("token %q longer than %d bytes", tok, protocol.MaxTokenLen)
			}
			if protocol.Keyed(tok) {
				if k := protocol.SearchTokenKey(tok); k.Type() != cid.Raw || !protocol.IsCanonicalForm(k.String()) {
					t.Fatalf("key of %q: %s", tok, k)
				}
			}
		}
	})
}
