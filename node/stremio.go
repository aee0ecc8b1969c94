package node

import (
	"context"
	"errors"
	"net/http"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/stremio"
	"github.com/metamesh/node/store"
)

// addon puts the Stremio add-on (node/stremio) in front of the API's
// handler h, with the API's access rules: on loopback its paths take no
// token, off loopback they carry the add-on's (stremio.PathToken of the
// API's), which GET /api/stremio gives a client with the API's.
func (n *Node) addon(acc api.Access, h http.Handler) http.Handler {
	cfg := stremio.Config{Name: n.cfg.Name, PeerID: n.p2p.Host().ID().String(), Version: Version,
		Loopback: acc.Loopback, APIToken: acc.Token, HostAllowed: acc.HostAllowed, Listen: n.apiAddr}
	return stremio.New(cfg, n.cat, addonSource{n}, h)
}

// addonSource is the add-on's stremio.Source: the store's documents and
// the household's own search index.
type addonSource struct{ n *Node }

// Fields reads roots' documents in one round trip.
func (s addonSource) Fields(ctx context.Context, roots []store.RootID) ([]map[string]string, error) {
	cs, err := s.n.st.ReadChanged(ctx, roots)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(cs))
	for i, c := range cs {
		if c.Exists && c.Document.Local() {
			out[i] = c.Document.Presented()
		}
	}
	return out, nil
}

// errLocalOnly refuses the federation a search of the add-on never asks.
var errLocalOnly = errors.New("the Stremio add-on searches the household's own files only")

// Search searches the household's own files; a query without a word
// finds nothing.
func (s addonSource) Search(ctx context.Context, q string, limit int) ([]model.SearchHit, error) {
	if !api.HasWord(q) {
		return nil, nil
	}
	res, err := s.n.hh.SearchPage(ctx, q, limit, "", false, func() error { return errLocalOnly })
	return res.Hits, err
}
