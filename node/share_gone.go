package node

import (
	"context"

	"github.com/metamesh/node/node/federation"
)

// pathChanged is told by ingest of each change it applied to a path
// (ingest.Config.OnApplied): whatever file the exchange held open there
// to serve peers is no longer the library's (deleted, moved out or
// replaced), and is closed now rather than when it idles; a want of its
// blocks opens the file anew where the store says it is, if anywhere.
func (n *Node) pathChanged(path, from string) {
	if n.shr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), federation.RequestTimeout)
	defer cancel()
	n.shr.Gone(ctx, path)
	if from != "" {
		n.shr.Gone(ctx, from)
	}
}
