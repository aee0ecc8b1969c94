package protocol

import (
	"fmt"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multicodec"
	"github.com/multiformats/go-multihash"
)

// Multicodec and multihash codes the rank ladder knows.
const (
	CodeIdentity      = 0x00
	CodeRaw           = 0x55
	CodeDagPB         = 0x70
	CodeSHA1          = 0x11
	CodeSHA2_256      = 0x12
	CodeSHA3_256      = 0x16
	CodeSHA3_384      = 0x15
	CodeMidhash256    = 0x1000
	CodeBTFileV1      = 0x1001
	CodeBTFileV2      = 0x1002
	CodeUsenetPosting = 0x1003
	CodeBTIHv2        = 0x10B7
)

// Codecs of opaque locators: CIDs that name where something can be found
// rather than what its bytes are. They carry an identity multihash.
const (
	CodeNZBRelease   = 0x1005
	CodeURL          = 0x1006
	CodeCard         = 0x1007
	CodeYTVideo      = 0x1008
	CodeExtPlay      = 0x1009
	CodeProviderFile = 0x100A
)

// Tier is a rung of the canonical-CID ladder. Its value is the rank.
type Tier int

// The tiers, best first. Rank is by utility for external retrieval, not by
// cryptographic strength: a Usenet posting (a digest, but of no fetchable
// bytes) stays below a real content digest, and an opaque locator (not
// content-derived) below everything that is. A digest whose length does not
// match its hash function is TierOther.
const (
	TierIPFS          Tier = 40
	TierContentDigest Tier = 30
	TierUsenetPosting Tier = 25
	TierBitTorrentV2  Tier = 22
	TierBitTorrentV1  Tier = 20
	TierMidhash       Tier = 10
	TierLocator       Tier = 5
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
	case TierUsenetPosting:
		return "usenet-posting"
	case TierBitTorrentV2:
		return "bittorrent-v2"
	case TierBitTorrentV1:
		return "bittorrent-v1"
	case TierMidhash:
		return "midhash"
	case TierLocator:
		return "opaque-locator"
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
	if lengthProblem(c) != "" {
		return TierOther
	}
	codec := c.Type()
	code := c.Prefix().MhType
	either := func(want uint64) bool { return codec == want || code == want }
	switch {
	case codec == CodeDagPB:
		return TierIPFS
	// The codecs below are matched before the multihash: a Usenet posting's
	// multihash is a real sha2-256, but over a Message-ID set, not over
	// fetchable bytes; a locator is not content-derived at all.
	case codec == CodeUsenetPosting:
		return TierUsenetPosting
	case isLocator(codec):
		return TierLocator
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

func isLocator(codec uint64) bool { return codec >= CodeNZBRelease && codec <= CodeProviderFile }

// digestLength is the digest length, in bytes, of each fixed-length hash
// the ladder knows, keyed by multihash code. A codec that names a digest
// (a BitTorrent info-hash or file hash, a Usenet posting) demands the same
// length of whatever multihash it carries.
var digestLength = map[uint64]int{
	CodeSHA1:          20,
	CodeSHA2_256:      32,
	CodeSHA3_256:      32,
	CodeSHA3_384:      48,
	CodeMidhash256:    32,
	CodeBTFileV1:      20,
	CodeBTFileV2:      32,
	CodeUsenetPosting: 32,
	CodeBTIHv2:        32,
}

// lengthProblem says why the digest of c cannot be what its multihash code
// (or its codec) claims, or returns "" when its length is right. Such a
// CID ranks 0. A locator's identity digest may have any non-empty length.
func lengthProblem(c cid.Cid) string {
	p := c.Prefix()
	n := p.MhLength
	if want, ok := digestLength[p.MhType]; ok && n != want {
		return fmt.Sprintf("%s digest is %d bytes, want %d", hashName(p.MhType), n, want)
	}
	if want, ok := digestLength[p.Codec]; ok && n != want {
		return fmt.Sprintf("%s codec needs a %d-byte digest, got %d", codecName(p.Codec), want, n)
	}
	if isLocator(p.Codec) && n == 0 {
		return fmt.Sprintf("%s locator has an empty digest", codecName(p.Codec))
	}
	return ""
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
	// Problem says why a CID whose codec or multihash the ladder knows
	// still ranks 0 (a digest of the wrong length); empty otherwise.
	Problem string `json:"problem,omitempty"`
	// V0 is the CIDv0 form ("Qm…") where one exists (dag-pb over a
	// 32-byte sha2-256); Base58btc ("z…") and Base36 ("k…", what
	// subdomain gateways take) the CIDv1 in those bases.
	V0        string `json:"v0,omitempty"`
	Base58btc string `json:"base58btc"`
	Base36    string `json:"base36"`
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
		Problem:        lengthProblem(nc),
		V0:             v0Of(nc),
		Base58btc:      mustEncode(nc, multibase.Base58BTC),
		Base36:         mustEncode(nc, multibase.Base36),
	}, nil
}

// v0Of is c's CIDv0 text, "" when c has none.
func v0Of(c cid.Cid) string {
	p := c.Prefix()
	if p.Codec != cid.DagProtobuf || p.MhType != multihash.SHA2_256 || p.MhLength != 32 {
		return ""
	}
	return cid.NewCidV0(c.Hash()).String()
}

// mustEncode is the CIDv1 c in base b (every base go-multibase knows
// encodes every CID).
func mustEncode(c cid.Cid, b multibase.Encoding) string {
	s, err := cid.NewCidV1(c.Type(), c.Hash()).StringOfBase(b)
	if err != nil {
		return ""
	}
	return s
}

var ownNames = map[uint64]string{
	CodeMidhash256:    "midhash256",
	CodeBTFileV1:      "bittorrent-v1-file",
	CodeBTFileV2:      "bittorrent-v2-file",
	CodeUsenetPosting: "usenet-posting",
	CodeNZBRelease:    "nzb-release",
	CodeURL:           "url",
	CodeCard:          "card",
	CodeYTVideo:       "yt-video",
	CodeExtPlay:       "ext-play",
	CodeProviderFile:  "provider-file",
	CodeBTIHv2:        "btih-v2",
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
