package node

import (
	"context"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/node/dav"
)

// The WebDAV share (/dav/, node/dav): a Library of its own fed by the
// store's changes, laid out from the metadata, its files opened as GET
// /api/file opens them.

// newDAV makes the share's library, before the Household (its consumer
// of the store's changes is one of the Household's): the households'
// names are the Household's, asked when a request lays the share out.
func (n *Node) newDAV() {
	n.dav = dav.NewLibrary(func(peers ...string) map[string]string {
		if n.hh == nil {
			return nil
		}
		return n.hh.PeerNames(peers...)
	})
}

// davShare is the share the API mounts under /dav/: a local file is
// opened as GET /api/file opens it (checked to still hold the CID's
// bytes), a peer's streamed from the households that share it, as
// /api/file streams it for the household's own clients (the API lets
// only those see them).
func (n *Node) davShare() *dav.Share {
	b := &backend{n: n}
	open := func(ctx context.Context, c string, peer bool) (*api.File, error) {
		if peer {
			return b.PeerFile(ctx, c, api.Caller{})
		}
		return b.File(ctx, c)
	}
	return dav.NewShare(n.dav, open, "/dav", n.log.With("component", "dav"))
}
