package node

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/protocol"
)

// How a CID asked for is checked against the bytes of the IPFS CID a
// record paired it with.
func TestCheckOf(t *testing.T) {
	sum := func(codec uint64, code uint64) string {
		digest := sha256.Sum256([]byte{byte(codec), byte(code)})
		mh, err := multihash.Encode(digest[:], code)
		if err != nil {
			t.Fatal(err)
		}
		return cid.NewCidV1(codec, mh).String()
	}
	root, err := cid.Decode(sum(protocol.CodeDagPB, protocol.CodeSHA2_256))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, asked string
		want        check
		refused     bool
	}{
		{"the IPFS CID itself", root.String(), checkNone, false},
		{"sha2-256", sum(protocol.CodeRaw, protocol.CodeSHA2_256), checkSHA256, false},
		{"midhash", sum(protocol.CodeMidhash256, protocol.CodeMidhash256), checkMidhash, false},
		{"sha3-256", sum(protocol.CodeRaw, protocol.CodeSHA3_256), 0, true},
		{"bittorrent v1 file", sum(protocol.CodeBTFileV1, protocol.CodeBTFileV1), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkOf(tc.asked, root)
			if tc.refused {
				if !errors.Is(err, api.ErrUnprocessable) && !errors.Is(err, api.ErrBadRequest) {
					t.Fatalf("checkOf(%s) = %v, %v; want it refused", tc.asked, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("checkOf(%s) = %v, %v; want %v", tc.asked, got, err, tc.want)
			}
		})
	}
}
