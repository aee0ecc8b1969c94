package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/store"
)

// A second `make run` beside a running node would otherwise end on the
// first address it cannot bind ("bind: address already in use"), with
// nothing said of the node that holds it. Start looks first: a node that
// answers on the API address the data directory's api.url names, with
// the data directory's own peer ID, is this data directory's node; a
// node that answers on the API address this one is to listen on is
// another household's; anything else there is another program.

// ErrAlreadyRunning: a node already runs on the data directory, or
// serves its API on the address this one was to listen on.
var ErrAlreadyRunning = errors.New("a node already runs there")

// alreadyRunning is an ErrAlreadyRunning that says only its own message
// (which node, and how to reach it).
type alreadyRunning string

func (e alreadyRunning) Error() string        { return string(e) }
func (e alreadyRunning) Is(target error) bool { return target == ErrAlreadyRunning }

// probeTimeout bounds how long Start asks an API address whether a node
// answers there: on this machine it answers, or refuses, at once.
const probeTimeout = 2 * time.Second

// checkDataDirFree refuses to start a second node on a data directory
// whose node runs: one whose managed redis-server answers (or whose
// Redis is external), and whose API, at the address it wrote to
// api.url, answers with the peer ID of the directory's identity. A
// directory that only a scan or fsck holds, or whose node is gone, passes
// (the store's lock then waits for, or names, whoever holds it).
func (n *Node) checkDataDirFree(ctx context.Context) error {
	dir := n.cfg.DataDir
	if n.cfg.RedisURL == "" {
		if _, up := store.RunningServer(ctx, dir); !up {
			return nil
		}
	}
	u, err := ReadAPIURL(dir)
	if err != nil {
		return nil
	}
	if id, ok := n.nodeAt(ctx, u); ok && id == n.ownPeerID() {
		return n.runningHere(u)
	}
	return nil
}

// apiTaken says who holds the API address the node could not listen on
// (err): this data directory's node, another node, or another program,
// and how to reach the node or choose another address.
func (n *Node) apiTaken(ctx context.Context, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("api: listen on %s: %w", n.cfg.APIAddr, err)
	}
	u := ClientURL(n.cfg.APIAddr)
	id, ok := n.nodeAt(ctx, u)
	switch {
	case ok && id == n.ownPeerID():
		return n.runningHere(u)
	case ok:
		return alreadyRunning(fmt.Sprintf("the API address %s is another node's (peer %s; metamesh status --api %s reaches it): a second node on this machine needs --api, --listen and --data of its own (make run API=… LISTEN=… DATA=…)",
			n.cfg.APIAddr, id, u))
	}
	return fmt.Errorf("api: cannot listen on %s: address already in use, by another program: give the node another address with --api (env METAMESH_API; make run API=…)", n.cfg.APIAddr)
}

// runningHere is the error of a start on the data directory of a node
// that runs, its API at u: how to reach that node.
func (n *Node) runningHere(u string) error {
	status := "metamesh status"
	if dir := n.cfg.DataDir; dir != DefaultDataDir() {
		status += " --data " + dir
	}
	return alreadyRunning(fmt.Sprintf("a node already runs on this data directory, %s (API %s): %s reaches it; stop it first (Ctrl-C where it runs) to start it again",
		n.cfg.DataDir, u, status))
}

// nodeAt asks the API at base for its status: the peer ID of the node
// that answers, ok false when none does (nothing listens there, or
// something that is not a MetaMesh node). The data directory's API
// token goes along, for a node that serves off loopback.
func (n *Node) nodeAt(ctx context.Context, base string) (id string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/status", nil)
	if err != nil {
		return "", false
	}
	tf := n.cfg.APITokenFile
	if tf == "" {
		tf = filepath.Join(n.cfg.DataDir, APITokenFile)
	}
	if tok, err := os.ReadFile(tf); err == nil {
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var st struct {
		PeerID string `json:"peerId"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return "", false
	}
	if _, err := peer.Decode(st.PeerID); err != nil {
		return "", false
	}
	return st.PeerID, true
}

// ownPeerID is the peer ID of the data directory's identity, "" when it
// has none yet (a node that never ran there): nothing is created.
func (n *Node) ownPeerID() string {
	if _, err := os.Stat(filepath.Join(n.cfg.DataDir, p2p.IdentityFile)); err != nil {
		return ""
	}
	k, err := p2p.LoadIdentity(n.cfg.DataDir)
	if err != nil {
		return ""
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		return ""
	}
	return id.String()
}
