package protocol_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/protocol"
)

// mustCID builds the canonical string of a CIDv1 with the given codec and
// multihash code over a digest of n bytes of fill.
func mustCID(tb testing.TB, codec, code uint64, n int, fill byte) string {
	tb.Helper()
	mh, err := multihash.Encode(bytes.Repeat([]byte{fill}, n), code)
	if err != nil {
		tb.Fatal(err)
	}
	return cid.NewCidV1(codec, mh).String()
}

func TestRank(t *testing.T) {
	sha := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 1)
	v1 := cid.MustParse(sha)
	b58, err := v1.StringOfBase(multibase.Base58BTC)
	if err != nil {
		t.Fatal(err)
	}
	v0 := cid.NewCidV0(mustMH(t, protocol.CodeSHA2_256, 32, 2))
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"dag-pb sha2-256", mustCID(t, protocol.CodeDagPB, protocol.CodeSHA2_256, 32, 1), 40},
		{"dag-pb blake3", mustCID(t, protocol.CodeDagPB, 0x1e, 32, 1), 40},
		{"raw sha2-256", sha, 30},
		{"raw sha3-256", mustCID(t, protocol.CodeRaw, protocol.CodeSHA3_256, 32, 1), 30},
		{"raw sha3-384", mustCID(t, protocol.CodeRaw, protocol.CodeSHA3_384, 48, 1), 30},
		{"codec=code sha2-256", mustCID(t, protocol.CodeSHA2_256, protocol.CodeSHA2_256, 32, 1), 30},
		{"codec=code sha3-256", mustCID(t, protocol.CodeSHA3_256, protocol.CodeSHA3_256, 32, 1), 30},
		{"codec=code sha3-384", mustCID(t, protocol.CodeSHA3_384, protocol.CodeSHA3_384, 48, 1), 30},
		{"dag-cbor sha2-256 is other", mustCID(t, 0x71, protocol.CodeSHA2_256, 32, 1), 0},
		{"btih-v2 in codec", mustCID(t, protocol.CodeBTIHv2, protocol.CodeSHA2_256, 32, 1), 22},
		{"btih-v2 in multihash", mustCID(t, protocol.CodeRaw, protocol.CodeBTIHv2, 32, 1), 22},
		{"bt per-file v2 in codec", mustCID(t, protocol.CodeBTFileV2, protocol.CodeSHA2_256, 32, 1), 22},
		{"bt per-file v2 in multihash", mustCID(t, protocol.CodeRaw, protocol.CodeBTFileV2, 32, 1), 22},
		{"bt per-file v1 in codec", mustCID(t, protocol.CodeBTFileV1, 0x11, 20, 1), 20},
		{"bt per-file v1 in multihash", mustCID(t, protocol.CodeRaw, protocol.CodeBTFileV1, 20, 1), 20},
		{"midhash codec 0x1000", mustCID(t, protocol.CodeMidhash256, protocol.CodeMidhash256, 32, 1), 10},
		{"midhash raw codec", mustCID(t, protocol.CodeRaw, protocol.CodeMidhash256, 32, 1), 10},
		{"midhash under dag-cbor is other", mustCID(t, 0x71, protocol.CodeMidhash256, 32, 1), 0},
		{"usenet posting sha2-256", mustCID(t, protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32, 1), 25},
		{"usenet posting any 32-byte multihash", mustCID(t, protocol.CodeUsenetPosting, protocol.CodeIdentity, 32, 1), 25},
		{"locator nzb-release", mustCID(t, protocol.CodeNZBRelease, protocol.CodeIdentity, 40, 'n'), 5},
		{"locator url", mustCID(t, protocol.CodeURL, protocol.CodeIdentity, 23, 'u'), 5},
		{"locator card", mustCID(t, protocol.CodeCard, protocol.CodeIdentity, 8, 'c'), 5},
		{"locator yt-video", mustCID(t, protocol.CodeYTVideo, protocol.CodeIdentity, 11, 'y'), 5},
		{"locator ext-play", mustCID(t, protocol.CodeExtPlay, protocol.CodeIdentity, 1, 'e'), 5},
		{"locator provider-file", mustCID(t, protocol.CodeProviderFile, protocol.CodeIdentity, 200, 'p'), 5},
		{"locator codec wins over a btih-v2 multihash", mustCID(t, protocol.CodeURL, protocol.CodeBTIHv2, 32, 1), 5},
		{"locator with an empty digest", mustCID(t, protocol.CodeURL, protocol.CodeIdentity, 0, 0), 0},
		{"0x1004 between posting and locators", mustCID(t, 0x1004, protocol.CodeIdentity, 8, 1), 0},
		{"0x100b after the locators", mustCID(t, 0x100B, protocol.CodeIdentity, 8, 1), 0},
		{"identity under raw", mustCID(t, protocol.CodeRaw, protocol.CodeIdentity, 8, 1), 0},
		{"md5", mustCID(t, protocol.CodeRaw, 0xd5, 16, 1), 0},
		{"crc32", mustCID(t, protocol.CodeRaw, 0x0132, 4, 1), 0},
		{"sha1", mustCID(t, protocol.CodeRaw, 0x11, 20, 1), 0},
		{"unknown codec and hash", mustCID(t, 0x300001, 0x300002, 8, 1), 0},
		{"CIDv0 text", v0.String(), 0},
		{"base58 CIDv1 text", b58, 0},
		{"upper-case base32", "B" + upper(sha[1:]), 0},
		{"algo token", "sha256:" + sha, 0},
		{"garbage", "not-a-cid", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protocol.Rank(tt.in); got != tt.want {
				t.Errorf("Rank(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

// TestRank_WrongDigestLength: every digest tier ranks 0 when the digest is
// shorter or longer than its hash function makes.
func TestRank_WrongDigestLength(t *testing.T) {
	tests := []struct {
		name        string
		codec, code uint64
		right       int
	}{
		{"dag-pb sha2-256", protocol.CodeDagPB, protocol.CodeSHA2_256, 32},
		{"raw sha2-256", protocol.CodeRaw, protocol.CodeSHA2_256, 32},
		{"raw sha3-256", protocol.CodeRaw, protocol.CodeSHA3_256, 32},
		{"raw sha3-384", protocol.CodeRaw, protocol.CodeSHA3_384, 48},
		{"codec=code sha2-256", protocol.CodeSHA2_256, protocol.CodeSHA2_256, 32},
		{"codec=code sha3-256", protocol.CodeSHA3_256, protocol.CodeSHA3_256, 32},
		{"codec=code sha3-384", protocol.CodeSHA3_384, protocol.CodeSHA3_384, 48},
		{"usenet posting sha2-256", protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32},
		{"usenet posting identity", protocol.CodeUsenetPosting, protocol.CodeIdentity, 32},
		{"btih-v2 in codec", protocol.CodeBTIHv2, protocol.CodeSHA2_256, 32},
		{"btih-v2 in codec, identity", protocol.CodeBTIHv2, protocol.CodeIdentity, 32},
		{"btih-v2 in multihash", protocol.CodeRaw, protocol.CodeBTIHv2, 32},
		{"bt per-file v2 in codec", protocol.CodeBTFileV2, protocol.CodeSHA2_256, 32},
		{"bt per-file v2 in multihash", protocol.CodeRaw, protocol.CodeBTFileV2, 32},
		{"bt per-file v1 in codec", protocol.CodeBTFileV1, protocol.CodeSHA1, 20},
		{"bt per-file v1 in codec, identity", protocol.CodeBTFileV1, protocol.CodeIdentity, 20},
		{"bt per-file v1 in multihash", protocol.CodeRaw, protocol.CodeBTFileV1, 20},
		{"midhash codec 0x1000", protocol.CodeMidhash256, protocol.CodeMidhash256, 32},
		{"midhash raw codec", protocol.CodeRaw, protocol.CodeMidhash256, 32},
	}
	for _, tt := range tests {
		for _, n := range []int{0, 1, tt.right - 1, tt.right + 1, 2 * tt.right} {
			t.Run(fmt.Sprintf("%s/%d bytes", tt.name, n), func(t *testing.T) {
				in := mustCID(t, tt.codec, tt.code, n, 1)
				if got := protocol.Rank(in); got != 0 {
					t.Errorf("Rank(%q) = %d, want 0", in, got)
				}
			})
		}
		t.Run(fmt.Sprintf("%s/%d bytes ranks", tt.name, tt.right), func(t *testing.T) {
			in := mustCID(t, tt.codec, tt.code, tt.right, 1)
			if got := protocol.Rank(in); got == 0 {
				t.Errorf("Rank(%q) = 0 at the right length", in)
			}
		})
	}
	t.Run("bt per-file v1 codec with a 32-byte sha2-256", func(t *testing.T) {
		in := mustCID(t, protocol.CodeBTFileV1, protocol.CodeSHA2_256, 32, 1)
		if got := protocol.Rank(in); got != 0 {
			t.Errorf("Rank(%q) = %d, want 0", in, got)
		}
	})
}

func TestCanonical(t *testing.T) {
	ipfs := mustCID(t, protocol.CodeDagPB, protocol.CodeSHA2_256, 32, 9)
	shaA := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 1)
	shaB := mustCID(t, protocol.CodeRaw, protocol.CodeSHA3_256, 32, 2)
	mid := mustCID(t, protocol.CodeMidhash256, protocol.CodeMidhash256, 32, 3)
	usenet := mustCID(t, protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32, 4)
	btv2 := mustCID(t, protocol.CodeBTIHv2, protocol.CodeSHA2_256, 32, 5)
	url := mustCID(t, protocol.CodeURL, protocol.CodeIdentity, 20, 'u')
	short := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 16, 6)
	lo, hi := shaA, shaB
	if hi < lo {
		lo, hi = hi, lo
	}
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"empty", nil, ""},
		{"single", []string{mid}, mid},
		{"ipfs wins", []string{mid, shaA, ipfs}, ipfs},
		{"digest beats midhash", []string{mid, shaA}, shaA},
		{"tie goes to smaller string", []string{hi, lo}, lo},
		{"tie is order independent", []string{lo, hi}, lo},
		{"garbage never beats a rank", []string{"zzz", mid, "Qm"}, mid},
		{"digest beats usenet posting", []string{usenet, shaA}, shaA},
		{"usenet posting beats bittorrent v2", []string{btv2, usenet}, usenet},
		{"midhash beats locator", []string{url, mid}, mid},
		{"locator beats wrong-length digest", []string{short, url}, url},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protocol.Canonical(tt.in); got != tt.want {
				t.Errorf("Canonical(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	sha := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 1)
	b58, _ := cid.MustParse(sha).StringOfBase(multibase.Base58BTC)
	mh := mustMH(t, protocol.CodeSHA2_256, 32, 2)
	v0 := cid.NewCidV0(mh)
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"canonical stays", sha, sha, false},
		{"base58 v1", b58, sha, false},
		{"v0 to v1 dag-pb", v0.String(), cid.NewCidV1(protocol.CodeDagPB, mh).String(), false},
		{"surrounding space", " " + sha + "\n", sha, false},
		{"empty", "", "", true},
		{"garbage", "hello", "", true},
		{"bad base32 char", "b1111", "", true},
		{"too long", "b" + string(bytes.Repeat([]byte("a"), 600)), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := protocol.Normalize(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Normalize(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseStrictRejectsOtherForms(t *testing.T) {
	sha := mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 32, 1)
	if _, err := protocol.ParseStrict(sha); err != nil {
		t.Fatalf("ParseStrict(canonical) = %v", err)
	}
	b58, _ := cid.MustParse(sha).StringOfBase(multibase.Base58BTC)
	for _, in := range []string{b58, "B" + upper(sha[1:]), cid.NewCidV0(mustMH(t, 0x12, 32, 1)).String()} {
		if _, err := protocol.ParseStrict(in); err == nil {
			t.Errorf("ParseStrict(%q) accepted a non-canonical form", in)
		}
	}
}

func TestInspect(t *testing.T) {
	mid := mustCID(t, protocol.CodeMidhash256, protocol.CodeMidhash256, 32, 3)
	got, err := protocol.Inspect(mid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.Codec != "midhash256" || got.Multihash != "midhash256" ||
		got.DigestLength != 32 || got.Tier != "midhash" || got.Rank != 10 {
		t.Errorf("Inspect(midhash) = %+v", got)
	}
	v0 := cid.NewCidV0(mustMH(t, protocol.CodeSHA2_256, 32, 2)).String()
	got, err = protocol.Inspect(v0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 0 || got.Codec != "dag-pb" || got.Multihash != "sha2-256" || got.Rank != 0 || got.NormalizedRank != 40 || got.Tier != "ipfs" {
		t.Errorf("Inspect(v0) = %+v", got)
	}
	// Its other forms: each decodes to the same CID.
	if got.V0 != v0 || got.Base58btc[0] != 'z' || got.Base36[0] != 'k' {
		t.Errorf("forms of v0: %q %q %q", got.V0, got.Base58btc, got.Base36)
	}
	for _, f := range []string{got.Base58btc, got.Base36} {
		if n, err := protocol.Normalize(f); err != nil || n != got.Normalized {
			t.Errorf("Normalize(%s) = %s, %v; want %s", f, n, err, got.Normalized)
		}
	}
	if mi, _ := protocol.Inspect(mid); mi.V0 != "" {
		t.Errorf("a midhash has a CIDv0 form: %s", mi.V0)
	}
	if _, err := protocol.Inspect("nope"); err == nil {
		t.Error("Inspect(garbage) succeeded")
	}
}

func TestInspect_Tiers(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantCodec   string
		wantTier    string
		wantRank    int
		wantProblem string
	}{
		{"usenet posting", mustCID(t, protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32, 1), "usenet-posting", "usenet-posting", 25, ""},
		{"nzb-release", mustCID(t, protocol.CodeNZBRelease, protocol.CodeIdentity, 9, 'n'), "nzb-release", "opaque-locator", 5, ""},
		{"url", mustCID(t, protocol.CodeURL, protocol.CodeIdentity, 9, 'u'), "url", "opaque-locator", 5, ""},
		{"card", mustCID(t, protocol.CodeCard, protocol.CodeIdentity, 9, 'c'), "card", "opaque-locator", 5, ""},
		{"yt-video", mustCID(t, protocol.CodeYTVideo, protocol.CodeIdentity, 9, 'y'), "yt-video", "opaque-locator", 5, ""},
		{"ext-play", mustCID(t, protocol.CodeExtPlay, protocol.CodeIdentity, 9, 'e'), "ext-play", "opaque-locator", 5, ""},
		{"provider-file", mustCID(t, protocol.CodeProviderFile, protocol.CodeIdentity, 9, 'p'), "provider-file", "opaque-locator", 5, ""},
		{"short sha2-256", mustCID(t, protocol.CodeRaw, protocol.CodeSHA2_256, 16, 1), "raw", "other", 0, "sha2-256 digest is 16 bytes, want 32"},
		{"short usenet posting", mustCID(t, protocol.CodeUsenetPosting, protocol.CodeIdentity, 16, 1), "usenet-posting", "other", 0, "usenet-posting codec needs a 32-byte digest, got 16"},
		{"empty locator", mustCID(t, protocol.CodeURL, protocol.CodeIdentity, 0, 0), "url", "other", 0, "url locator has an empty digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := protocol.Inspect(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Codec != tt.wantCodec || got.Tier != tt.wantTier || got.Rank != tt.wantRank || got.Problem != tt.wantProblem {
				t.Errorf("Inspect(%q) = codec %q tier %q rank %d problem %q; want %q %q %d %q", tt.in,
					got.Codec, got.Tier, got.Rank, got.Problem, tt.wantCodec, tt.wantTier, tt.wantRank, tt.wantProblem)
			}
		})
	}
}

func FuzzRank(f *testing.F) {
	f.Add("")
	f.Add("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
	f.Add("bagacbabaecxvk4hvugaqw6xxrsxuxrykmyhq35i6ik5pshkn4wzdfdpa5a67y")
	f.Add("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG")
	f.Add("zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA")
	f.Add(mustCID(f, protocol.CodeUsenetPosting, protocol.CodeSHA2_256, 32, 1))
	f.Add(mustCID(f, protocol.CodeURL, protocol.CodeIdentity, 20, 'u'))
	f.Add(mustCID(f, protocol.CodeRaw, protocol.CodeSHA2_256, 16, 1))
	f.Fuzz(func(t *testing.T, s string) {
		r := protocol.Rank(s)
		switch r {
		case 0, 5, 10, 20, 22, 25, 30, 40:
		default:
			t.Fatalf("Rank(%q) = %d, not a tier", s, r)
		}
		if r > 0 && !protocol.IsCanonicalForm(s) {
			t.Fatalf("Rank(%q) = %d for a non-canonical string", s, r)
		}
		n, err := protocol.Normalize(s)
		if err != nil {
			return
		}
		if !protocol.IsCanonicalForm(n) {
			t.Fatalf("Normalize(%q) = %q, not canonical", s, n)
		}
		if n2, err := protocol.Normalize(n); err != nil || n2 != n {
			t.Fatalf("Normalize is not idempotent: %q -> %q (%v)", n, n2, err)
		}
		if protocol.Better(s, n) == protocol.Better(n, s) && s != n {
			t.Fatalf("Better is not a strict order for %q, %q", s, n)
		}
	})
}

func mustMH(tb testing.TB, code uint64, n int, fill byte) multihash.Multihash {
	tb.Helper()
	mh, err := multihash.Encode(bytes.Repeat([]byte{fill}, n), code)
	if err != nil {
		tb.Fatal(err)
	}
	return mh
}

func upper(s string) string { return string(bytes.ToUpper([]byte(s))) }
