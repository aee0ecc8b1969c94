package share

import (
	"container/list"
	"context"
	"errors"
	"sync"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/metamesh/node/dag"
)

// blockstore is what bitswap reads and writes. Two readers share it,
// told apart by the context:
//
//   - the server (a peer's want): only the block index, blocks produced
//     from the library files in place, at --share-rate;
//   - the node's own fetches (a context from fetching): the index too (a
//     file the household has is read from disk), then the blocks the
//     fetch received, kept in a bounded cache until read.
//
// Put is the bitswap client storing what it received: into the cache,
// never onto disk, and never served to other peers.
type blockstore struct {
	x     *Exchange
	cache *blockCache
}

type fetchKey struct{}

// fetching marks ctx as the node's own fetch.
func fetching(ctx context.Context) context.Context { return context.WithValue(ctx, fetchKey{}, true) }

func isFetch(ctx context.Context) bool { _, ok := ctx.Value(fetchKey{}).(bool); return ok }

func (bs *blockstore) Has(ctx context.Context, c cid.Cid) (bool, error) {
	_, err := bs.GetSize(ctx, c)
	if ipld.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (bs *blockstore) GetSize(ctx context.Context, c cid.Cid) (int, error) {
	if isFetch(ctx) {
		if b, ok := bs.cache.get(c); ok {
			return len(b.RawData()), nil
		}
	}
	e, err := bs.x.entry(ctx, c)
	if err != nil {
		return 0, err
	}
	if !bs.x.servable(ctx, c, e) {
		return 0, notFound(c)
	}
	if e.internal != nil {
		return len(e.internal), nil
	}
	return e.size, nil
}

func (bs *blockstore) Get(ctx context.Context, c cid.Cid) (blocks.Block, error) {
	fetch := isFetch(ctx)
	if fetch {
		if b, ok := bs.cache.get(c); ok {
			return b, nil
		}
	}
	e, err := bs.x.entry(ctx, c)
	if err != nil {
		return nil, err
	}
	data, err := bs.x.block(ctx, c, e, !fetch)
	if err != nil {
		return nil, err
	}
	return blocks.NewBlockWithCid(data, c)
}

func (bs *blockstore) Put(_ context.Context, b blocks.Block) error {
	bs.cache.add(b)
	return nil
}

func (bs *blockstore) PutMany(_ context.Context, bls []blocks.Block) error {
	for _, b := range bls {
		bs.cache.add(b)
	}
	return nil
}

func (bs *blockstore) DeleteBlock(_ context.Context, c cid.Cid) error {
	bs.cache.remove(c)
	return nil
}

// AllKeysChan lists nothing: the blocks are the library's, not a store's
// to enumerate.
func (bs *blockstore) AllKeysChan(context.Context) (<-chan cid.Cid, error) {
	ch := make(chan cid.Cid)
	close(ch)
	return ch, nil
}

// notFound is the error bitswap takes for "DONT_HAVE".
func notFound(c cid.Cid) error { return ipld.ErrNotFound{Cid: c} }

// isMissing reports an index miss.
func isMissing(err error) bool {
	return errors.Is(err, datastore.ErrNotFound) || errors.Is(err, errBadEntry) || errors.Is(err, dag.ErrNotInDAG)
}

// blockCache is a bounded LRU of the blocks fetches received, by bytes.
type blockCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	ll    *list.List
	items map[string]*list.Element
}

func newBlockCache(max int) *blockCache {
	return &blockCache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *blockCache) add(b blocks.Block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := string(b.Cid().Hash())
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.items[k] = c.ll.PushFront(b)
	c.bytes += len(b.RawData())
	for c.bytes > c.max && c.ll.Len() > 0 {
		c.drop(c.ll.Back())
	}
}

func (c *blockCache) get(id cid.Cid) (blocks.Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[string(id.Hash())]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	b := el.Value.(blocks.Block)
	if !b.Cid().Equals(id) {
		// Same bytes under another codec.
		nb, err := blocks.NewBlockWithCid(b.RawData(), id)
		if err != nil {
			return nil, false
		}
		return nb, true
	}
	return b, true
}

func (c *blockCache) remove(id cid.Cid) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[string(id.Hash())]; ok {
		c.drop(el)
	}
}

func (c *blockCache) drop(el *list.Element) {
	b := c.ll.Remove(el).(blocks.Block)
	delete(c.items, string(b.Cid().Hash()))
	c.bytes -= len(b.RawData())
}
