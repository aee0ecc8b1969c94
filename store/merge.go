package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/metamesh/node/protocol"
)

// Bounds on one record given to MergeRecord. They match the record
// protocol's caps (256 CIDs, 4096 meta entries, 512-byte keys, 64 KiB
// values, 1 MiB in all), so a verified record always fits.
const (
	MaxMergeCIDs       = 256
	MaxMergeFields     = 4096
	MaxMergeFieldName  = 512
	MaxMergeFieldValue = 64 << 10
	MaxMergeBytes      = 1 << 20
	// MaxPeerID bounds a peer ID (a libp2p peer ID is about 52 characters).
	MaxPeerID = 128
)

// ErrInvalidRecord: MergeRecord was given a record it cannot take (no or
// too many CIDs, a CID not in canonical form, a reserved or malformed
// field name, an empty or malformed peer ID, too many bytes). Nothing was
// written.
var ErrInvalidRecord = errors.New("invalid record")

// OriginPrefix is the first segment of the fields that hold what peers
// said about a root: origin/<peerID>/<field>.
const OriginPrefix = "origin"

// MergeResult says what MergeRecord did.
type MergeResult struct {
	// Root holds the record's members now; "" on a conflict.
	Root RootID
	// Written is false when the record brought nothing new (a repeat):
	// then nothing at all was written.
	Written bool
	// Minted: Root is a new root known only from peers.
	Minted bool
	// Local: Root is a local (ingested) root.
	Local bool
	// Conflict: the record's strong digests belong to two or more local
	// roots (Conflicting, sorted). They are never joined; nothing of the
	// record was merged, the conflict is recorded in conflicts:<root> of
	// each.
	Conflict    bool
	Conflicting []RootID
	// Document is Root's document as the merge left it (none on a
	// conflict): the merge answers with what it wrote, read in the same
	// script.
	Document Document
	// Folded are the roots known only from peers that were folded into
	// Root because the record links them through a strong digest.
	Folded []RootID
	// Evicted are the least recently touched roots known only from peers
	// deleted to keep them under Options.PeerRootsMax.
	Evicted []RootID
}

// MergeRecord merges a verified record from peer — its CIDs (canonical
// form) and its shareable flat metadata — into the store, conflict-free:
//
//   - The record's strong members (rank >= protocol.StrongRank) select
//     the roots it belongs to: every root holding one of them (the alias
//     holder, and roots known only from peers listed as alternative
//     holders). None: a root known only from peers is minted with every
//     member (a record without any strong member goes to the peer-only
//     root whose key-set is exactly its members, minted when there is
//     none: weak members never join anything). One: the members it lacks
//     are added. Several: the peer-only ones are folded into the local
//     one, or with none local into the one minted first (smallest root
//     ID); two local roots are never joined (Conflict, nothing merged).
//   - Members added to a root are recorded in supplied:<root> (never
//     counted as computed from the node's bytes) and in learned:<root>
//     with the peer (unless the root vouches for them: computed from its
//     own bytes or supplied locally), so a local root's canonical CID and
//     records never take them (Document.Vouched); an alias a local root
//     holds is never repointed; a member another local root computed
//     from its own bytes (its midhash: its strong digests make a
//     conflict) is not added to a local root; filePath, sizeByte, mtime,
//     duplicates and own:<root> are never written.
//   - An alias held by roots known only from peers goes to a fixed one of
//     its holders: a local holder first, then the holder with the most
//     members, then the smallest sorted member list; so the resolution of
//     every CID does not depend on the order records arrive in.
//   - meta is stored as origin/<peer>/<field> where the root has no such
//     field yet: a peer's first claim is kept (records carry no order a
//     repeat could be told from an update by), so merging any records
//     again writes nothing; peers:<root> gains peer.
//   - A repeat writes nothing at all (Written false, no event).
//   - Roots known only from peers are scored in peerroots by the last
//     merge that wrote to them; beyond Options.PeerRootsMax the least
//     recently touched are deleted (roots that meanwhile became local
//     leave peerroots and are kept).
//
// Invalid input returns an error wrapping ErrInvalidRecord and writes
// nothing.
func (s *Store) MergeRecord(ctx context.Context, peer string, cids []string, meta map[string]string) (MergeResult, error) {
	strong, weak, names, err := checkRecord(peer, cids, meta)
	if err != nil {
		return MergeResult{}, err
	}
	res, err := luaMergeRecord.run(ctx, s, mergeRecordArgs{
		peer: peer, newRoot: NewRootID(), cap: s.peerMax, strong: strong, weak: weak, names: names, meta: meta,
	})
	if err != nil {
		return MergeResult{}, err
	}
	if res.Conflict {
		s.log.Warn("peer record links local roots with different content; not merged",
			"peer", peer, "roots", res.Conflicting, "cids", len(cids))
	}
	return res, nil
}

// checkRecord validates MergeRecord's input and returns the strong and
// weak members (sorted, without repeats) and the sorted field names.
func checkRecord(peer string, cids []string, meta map[string]string) (strong, weak, names []string, err error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("store: merge record: %s: %w", fmt.Sprintf(format, a...), ErrInvalidRecord)
	}
	if err := checkPeer(peer); err != nil {
		return nil, nil, nil, bad("%v", err)
	}
	switch {
	case len(cids) == 0:
		return nil, nil, nil, bad("no CIDs")
	case len(cids) > MaxMergeCIDs:
		return nil, nil, nil, bad("%d CIDs, at most %d", len(cids), MaxMergeCIDs)
	case len(meta) > MaxMergeFields:
		return nil, nil, nil, bad("%d fields, at most %d", len(meta), MaxMergeFields)
	}
	total := 0
	seen := make(map[string]bool, len(cids))
	for _, c := range cids {
		if _, err := protocol.ParseStrict(c); err != nil {
			return nil, nil, nil, bad("cid: %v", err)
		}
		total += len(c)
		if seen[c] {
			continue
		}
		seen[c] = true
		if protocol.Rank(c) >= protocol.StrongRank {
			strong = append(strong, c)
		} else {
			weak = append(weak, c)
		}
	}
	for f, v := range meta {
		// A record's sizeByte is the producer's file size: kept, like every
		// peer field, under origin/<peer>/.
		if err := ValidField(f); err != nil && f != "sizeByte" {
			return nil, nil, nil, bad("%v", err)
		}
		first, _, _ := strings.Cut(f, "/")
		switch {
		case first == OriginPrefix:
			return nil, nil, nil, bad("field %q: the %s/ prefix holds peers' claims", f, OriginPrefix)
		case len(f) > MaxMergeFieldName:
			return nil, nil, nil, bad("field name of %d bytes, at most %d", len(f), MaxMergeFieldName)
		case len(v) > MaxMergeFieldValue:
			return nil, nil, nil, bad("field %q: value of %d bytes, at most %d", f, len(v), MaxMergeFieldValue)
		}
		total += len(f) + len(v)
		names = append(names, f)
	}
	if total > MaxMergeBytes {
		return nil, nil, nil, bad("%d bytes, at most %d", total, MaxMergeBytes)
	}
	sort.Strings(strong)
	sort.Strings(weak)
	sort.Strings(names)
	return strong, weak, names, nil
}

// checkPeer demands a plausible peer ID: non-empty, at most MaxPeerID
// bytes, printable, no '/' and no space (it is a key segment and a
// member of space-separated lists).
func checkPeer(peer string) error {
	switch {
	case peer == "":
		return errors.New("empty peer ID")
	case len(peer) > MaxPeerID:
		return fmt.Errorf("peer ID of %d bytes, at most %d", len(peer), MaxPeerID)
	case !utf8.ValidString(peer):
		return errors.New("peer ID is not UTF-8")
	}
	for _, r := range peer {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("peer ID %q has a %q", peer, r)
		}
	}
	return nil
}

// Keys of the federation. See doc.go.
const keyPeerRoots = "peerroots"

func peersKey(r RootID) string     { return "peers:" + string(r) }
func conflictsKey(r RootID) string { return "conflicts:" + string(r) }

// PeerRootTouched is when a merge last wrote to root, a root known only
// from peers (zero for any other root): how old what peers said of it is.
func (s *Store) PeerRootTouched(ctx context.Context, root RootID) (time.Time, error) {
	ms, err := s.rdb.ZScore(ctx, keyPeerRoots, string(root)).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store: %w", err)
	}
	return time.UnixMilli(int64(ms)), nil
}
