package share

import (
	"context"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
)

// Artwork is served to peers even by a household that does not share its
// files (--share-files off): the blocks of a file Config.Art says is
// artwork of a file the household announces (a poster, fan art) answer
// wants; no other block does. The answers of Config.Art are remembered
// for artTTL, per root, so that the wants for an image's blocks cost one
// question.

// artTTL is how long an answer of Config.Art is remembered.
const artTTL = time.Minute

// maxArtAnswers bounds the answers remembered (a want list of random
// CIDs asks once each, then is answered from memory).
const maxArtAnswers = 10_000

// artTimeout bounds one question to Config.Art (a few store reads).
const artTimeout = 2 * time.Second

type artAnswers struct {
	mu sync.Mutex
	m  map[string]artAnswer
}

type artAnswer struct {
	art   bool
	until time.Time
}

// artBlock reports whether block c is of a file Config.Art says is
// artwork: one of the files the index says hold it, else c itself (the
// root of a file not indexed yet, which its first want indexes).
func (x *Exchange) artBlock(c cid.Cid) bool {
	if x.cfg.Art == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), artTimeout)
	defer cancel()
	e, err := x.ix.get(ctx, c)
	if err != nil {
		return x.isArt(ctx, c)
	}
	for _, h := range e.holders {
		if x.isArt(ctx, h.root) {
			return true
		}
	}
	return false
}

// isArt is Config.Art's answer for root, remembered for artTTL.
func (x *Exchange) isArt(ctx context.Context, root cid.Cid) bool {
	k := string(root.Hash())
	x.art.mu.Lock()
	a, ok := x.art.m[k]
	x.art.mu.Unlock()
	if ok && time.Now().Before(a.until) {
		return a.art
	}
	art := x.cfg.Art(ctx, root)
	if ctx.Err() != nil {
		return art // a store that did not answer: asked again next time
	}
	x.art.mu.Lock()
	defer x.art.mu.Unlock()
	if len(x.art.m) >= maxArtAnswers {
		clear(x.art.m)
	}
	x.art.m[k] = artAnswer{art: art, until: time.Now().Add(artTTL)}
	return art
}
