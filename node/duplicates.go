package node

import (
	"context"

	"github.com/metamesh/node/api"
)

// Duplicates answers GET /api/duplicates from the catalog's copies
// (node/catalog): no Redis read.
func (b *backend) Duplicates(_ context.Context, q api.DuplicatesQuery) (api.DuplicatesPage, error) {
	return b.n.cat.Duplicates(q), nil
}
