package protocol

import (
	"fmt"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multicodec"
	"github.com/multiformats/go-multihash"
)

// Multicodec and multihash codes the rank ladder knows.
const (
	CodeRaw        = 0x55
	CodeDagPB      = 0x70
	CodeSHA2_256   = 0x12
	CodeSHA3_256   = 0x16
	CodeSHA3_384   = 0x15
	CodeMidhash256 = 0x1000
	CodeBTFileV1   = 0x1001
	CodeBTFileV2   = 0x1002
	CodeBTIHv2     = 0x10B7
)

// Tier is a rung of the canonical-CID ladder. Its value is the rank.
type Tier int

// The tiers, best first. Rank is by utility for external retrieval, not by
// cryptographic strength.
const (
	TierIPFS          Tier = 40
	TierContentDigest Tier = 30
	TierBitTorrentV2  Tier = 22
	TierBitTorrentV1  Tier = 20
	TierMidhash       Tier = 10
	TierOther         Tier = 0
)

// StrongRank is the lowest rank of a digest strong enough to join two roots
// (weak-link safety: a midhash alone never joins anything).
const StrongRank = int(TierContentDigest)

// String names the tier.
func (t Tier) String() string {
	switch t {
	case TierIPFS:
		return "ipfs"
	case TierContentDigest:
		return "content-digest"
	case TierBitTorrentV2:
		return "bittorrent-v2"
	case TierBitTorrentV1:
		return "bittorrent-v1"
	case TierMidhash:
		return "midhash"
	}
	return "other"
}

// Rank returns the rank of s. It is strict: only the canonical string form
// (CIDv1, base32 lower) ranks; anything else — CIDv0 text, "algo:" tokens,
// garbage, the empty string — ranks 0.
func Rank(s string) int {
	c, err := ParseStrict(s)
	if err != nil {
		return 0
	}
	return int(tierOf(c))
}

func tierOf(c cid.Cid) Tier {
	codec := c.Type()
	code := c.Prefix().MhType
	either := func(want uint64) bool { return codec == want || code == want }
	switch {
	case codec == CodeDagPB:
		return TierIPFS
	case (code == CodeSHA2_256 || code == CodeSHA3_256 || code == CodeSHA3_384) &&
		(codec == CodeRaw || codec == code):
		return TierContentDigest
	case either(CodeBTIHv2), either(CodeBTFileV2):
		return TierBitTorrentV2
	case either(CodeBTFileV1):
		return TierBitTorrentV1
	case code == CodeMidhash256 && (codec == CodeMidhash256 || codec == CodeRaw):
		return TierMidhash
	}
	return TierOther
}

// Better reports whether a should be elected over b: higher rank wins, and
// a tie goes to the lexicographically smaller string, so every peer elects
// the same canonical CID and it does not churn.
func Better(a, b string) bool {
	ra, rb := Rank(a), Rank(b)
	if ra != rb {
		return ra > rb
	}
	return a < b
}

// Canonical returns the best of cids by Better, or "" when cids is empty.
func Canonical(cids []string) string {
	best := ""
	for i, c := range cids {
		if i == 0 || Better(c, best) {
			best = c
		}
	}
	return best
}

// Info describes one CID, as printed by "metamesh cid inspect".
type Info struct {
	Input          string `json:"input"`
	Normalized     string `json:"normalized"`
	Version        uint64 `json:"version"`
	Codec          string `json:"codec"`
	CodecCode      uint64 `json:"codecCode"`
	Multihash      string `json:"multihash"`
	MultihashCode  uint64 `json:"multihashCode"`
	DigestLength   int    `json:"digestLength"`
	Tier           string `json:"tier"`
	Rank           int    `json:"rank"`
	NormalizedRank int    `json:"normalizedRank"`
}

// Inspect decodes any valid CID text and describes it. Rank is the strict
// rank of the text as given; NormalizedRank that of its canonical form.
func Inspect(s string) (Info, error) {
	norm, err := Normalize(s)
	if err != nil {
		return Info{}, err
	}
	c, _ := cid.Decode(s) // Normalize succeeded, so s decodes.
	p := c.Prefix()
	nc, _ := cid.Decode(norm)
	return Info{
		Input:          s,
		Normalized:     norm,
		Version:        p.Version,
		Codec:          codecName(p.Codec),
		CodecCode:      p.Codec,
		Multihash:      hashName(p.MhType),
		MultihashCode:  p.MhType,
		DigestLength:   p.MhLength,
		Tier:           tierOf(nc).String(),
		Rank:           Rank(s),
		NormalizedRank: Rank(norm),
	}, nil
}

var ownNames = map[uint64]string{
	CodeMidhash256: "midhash256",
	CodeBTFileV1:   "bittorrent-v1-file",
	CodeBTFileV2:   "bittorrent-v2-file",
	CodeBTIHv2:     "btih-v2",
}

func codecName(code uint64) string {
	if n, ok := ownNames[code]; ok {
		return n
	}
	if n := multicodec.Code(code).String(); !strings.HasPrefix(n, "Code(") {
		return n
	}
	return fmt.Sprintf("0x%x", code)
}

func hashName(code uint64) string {
	if n, ok := ownNames[code]; ok {
		return n
	}
	if n, ok := multihash.Codes[code]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", code)
}
