package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Backend is what the API needs from the node. Implementations are safe
// for concurrent use.
type Backend interface {
	// Meta returns the JSON document of the file a canonical CID names.
	// local skips the federation. Errors wrap ErrNotFound or ErrUnavailable.
	Meta(ctx context.Context, cid string, local bool) (map[string]any, error)
	// Status reports the node's state.
	Status(ctx context.Context) (Status, error)
	// Ready returns nil once the node serves complete answers.
	Ready(ctx context.Context) error
	// Providers lists the peers the DHT returns for a canonical CID.
	Providers(ctx context.Context, cid string) ([]string, error)
	// Peers lists the connected peers.
	Peers(ctx context.Context) ([]Peer, error)
}

// Peer is one entry of GET /api/peers.
type Peer struct {
	ID        string   `json:"id"`
	Addrs     []string `json:"addrs"`
	LatencyMs float64  `json:"latencyMs,omitempty"`
}

// Status is the JSON shape of GET /api/status.
type Status struct {
	Version      string      `json:"version"`
	PeerID       string      `json:"peerId"`
	Addrs        []string    `json:"addrs"`
	Libraries    []string    `json:"libraries"`
	Roots        int64       `json:"roots"`
	Scan         any         `json:"scan"`
	Peers        int         `json:"peers"`
	ProvideQueue int         `json:"provideQueue"`
	Provide      any         `json:"provide,omitempty"`
	HashQueue    int         `json:"hashQueue"`
	Redis        RedisStatus `json:"redis"`
}

// RedisStatus is the "redis" part of Status.
type RedisStatus struct {
	OK      bool   `json:"ok"`
	Managed bool   `json:"managed"`
	Addr    string `json:"addr,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Server routes the API.
type Server struct {
	b   Backend
	log *slog.Logger
	mux *http.ServeMux
}

// New builds the routes; it starts nothing.
func New(b Backend, log *slog.Logger) *Server {
	s := &Server{b: b, log: log.With("component", "api"), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.HandleFunc("GET /ready", s.ready)
	s.mux.HandleFunc("GET /api/status", s.status)
	s.mux.HandleFunc("GET /api/meta/{cid}", s.meta)
	s.mux.HandleFunc("GET /api/providers/{cid}", s.providers)
	s.mux.HandleFunc("GET /api/peers", s.peers)
	s.mux.HandleFunc("GET /api/meta/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, fmt.Errorf("%w: missing CID: use /api/meta/<cid>", ErrBadRequest))
	})
	return s
}

// ServeHTTP implements http.Handler. Unknown routes and wrong methods get
// JSON errors too.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": r.Method + " is not allowed on " + r.URL.Path})
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint: " + r.URL.Path})
		return
	}
	start := time.Now()
	s.mux.ServeHTTP(w, r)
	s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "took", time.Since(start))
}

type statusRecorder struct {
	header http.Header
	code   int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(code int)        { r.code = code }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.b.Ready(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.b.Status(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) meta(w http.ResponseWriter, r *http.Request) {
	c, err := ParseCID(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	doc, err := s.b.Meta(r.Context(), c, flag(r.URL.Query().Get("local")))
	if err != nil {
		if status(err) >= 500 {
			s.log.Error("meta lookup", "cid", c, "err", err)
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

func (s *Server) providers(w http.ResponseWriter, r *http.Request) {
	c, err := ParseCID(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	ps, err := s.b.Providers(r.Context(), c)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cid": c, "providers": ps})
}

func (s *Server) peers(w http.ResponseWriter, r *http.Request) {
	ps, err := s.b.Peers(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"peers": ps})
}
