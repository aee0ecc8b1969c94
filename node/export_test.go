package node

import "net/http"

// Handler is the node's HTTP API handler (after Start), for tests that
// send it requests from addresses this machine cannot send from.
func (n *Node) Handler() http.Handler { return n.http.Handler }
