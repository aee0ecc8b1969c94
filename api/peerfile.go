package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// FederatedFetch is a fetch of a file known only from peers (GET
// /api/file of it, or /api/sources): its bytes come from other
// households. It is never a stranger's to start: a household's friends
// lend it their bandwidth, not to whoever reaches a --public-read API.
const FederatedFetch Federated = "fetch"

// PeerFiles is a Backend that also streams files known only from peers
// (an optional interface, as AnswerCache is).
type PeerFiles interface {
	// PeerFile opens the file a CID names, known only from peers (looked
	// up among them first when the CID is unknown here), as its blocks
	// come from the households that share it: Content reads in order and
	// seeks (a range fetches only its blocks). It calls
	// from.Federate(FederatedFetch) first and returns its error. Errors
	// wrap ErrNotFound (no such file, no provider known), ErrUnavailable
	// (no provider served it: a *SourcesError says what each answered),
	// or are File's for a file of this household.
	PeerFile(ctx context.Context, cid string, from Caller) (*File, error)
	// Sources says where the file's bytes can come from: this household,
	// or which of the households that have it serve it now.
	Sources(ctx context.Context, cid string, from Caller) (Sources, error)
}

// Sources is the answer of GET /api/sources/<cid>.
type Sources struct {
	CID string `json:"cid"`
	// IPFS is the file's IPFS CID, the root of the blocks fetched.
	IPFS string `json:"ipfs,omitempty"`
	// Local is true when the file is in this household's libraries.
	Local bool `json:"local"`
	// Available is true when its bytes can be read now: local, or a
	// provider sent its root.
	Available bool  `json:"available"`
	Size      int64 `json:"size,omitempty"`
	// Providers are what each household that has it answered.
	Providers []Source `json:"providers"`
	// Reason says in words why the bytes cannot be read ("" when they
	// can).
	Reason string `json:"reason,omitempty"`
}

// Source is one provider's answer (Sources.Providers).
type Source struct {
	Peer string `json:"peer"`
	// State is "shares", "does not share" (it answered DONT_HAVE: its
	// household does not run --share-files), "relayed" (reached only
	// through a relay, which carries too little for a file),
	// "unreachable" or "no answer".
	State string `json:"state"`
}

// SourcesError is a fetch no provider served, with what each answered.
// It unwraps to ErrUnavailable (503).
type SourcesError struct {
	Msg       string
	Providers []Source
}

func (e *SourcesError) Error() string { return e.Msg }
func (e *SourcesError) Unwrap() error { return ErrUnavailable }

// sources answers GET /api/sources/<cid>.
func (s *Server) sources(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	pf, ok := s.b.(PeerFiles)
	if !ok {
		writeError(w, fmt.Errorf("%w: this node fetches no file from peers", ErrNotFound))
		return
	}
	src, err := pf.Sources(r.Context(), c, s.caller(r))
	if err != nil {
		s.logFailure(r, "sources", err, "cid", c)
		writeError(w, err)
		return
	}
	if src.Providers == nil {
		src.Providers = []Source{}
	}
	writeJSON(w, http.StatusOK, src)
}

// peerFile is the file of a CID known only from peers, when the backend
// fetches such files, or of a CID unknown here that a trusted client asks
// for (the backend looks it up among its peers first); notLocal, the
// local answer, otherwise.
func (s *Server) peerFile(ctx context.Context, from Caller, c string, notLocal error) (*File, error) {
	pf, ok := s.b.(PeerFiles)
	if !ok {
		return nil, notLocal
	}
	known := errors.As(notLocal, new(*NotFoundError))
	if !known && (from.s != nil || !errors.Is(notLocal, ErrNotFound)) {
		return nil, notLocal
	}
	f, err := pf.PeerFile(ctx, c, from)
	if errors.Is(err, ErrNotFound) && !known {
		// No peer has it either: the local answer says it as well.
		return nil, notLocal
	}
	return f, err
}

// openFile opens the bytes of the file c names for from: local, or, for
// a file known only from peers, streamed from the households that share
// it.
func (s *Server) openFile(ctx context.Context, from Caller, c string) (*File, error) {
	f, err := s.b.File(ctx, c)
	if err != nil {
		f, err = s.peerFile(ctx, from, c, err)
	}
	return f, err
}
