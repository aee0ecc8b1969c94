package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Backend is what the API needs from the node. Implementations are safe
// for concurrent use.
type Backend interface {
	// Meta returns the document of the file a canonical CID names (the
	// answer of GET /api/meta, which Document.MarshalJSON writes). local
	// skips the federation. Before it asks peers (a CID it does not
	// hold, a record from peers to refresh) it calls from.Federate and
	// returns its error; what it holds it answers whatever from is.
	// Errors wrap ErrNotFound, ErrUnavailable or ErrRateLimited.
	Meta(ctx context.Context, cid string, local bool, from Caller) (Document, error)
	// Status reports the node's state.
	Status(ctx context.Context) (Status, error)
	// Ready returns nil once the node serves complete answers.
	Ready(ctx context.Context) error
	// Providers lists the peers the DHT returns for a canonical CID.
	Providers(ctx context.Context, cid string) ([]string, error)
	// Peers lists the connected peers.
	Peers(ctx context.Context) ([]Peer, error)
	// File opens the bytes of the local file a canonical CID names, once
	// its sha2-256 is confirmed and only inside a library root. Errors
	// wrap ErrNotFound (unknown, outside the libraries, gone; a
	// *NotFoundError for a file known only from peers), ErrConflict (not
	// confirmed yet, or changed on disk since it was hashed) or
	// ErrUnavailable. The caller closes File.Content.
	File(ctx context.Context, cid string) (*File, error)
	// Events follows the event stream after the stream ID after ("" for
	// from now on). An after that was trimmed from the stream makes the
	// first Next return ErrEventsTrimmed.
	Events(ctx context.Context, after string) (EventStream, error)
}

// AnswerCache is a Backend that also keeps encoded answers of GET
// /api/meta (an optional interface, as http.Flusher is of a
// ResponseWriter).
type AnswerCache interface {
	// CachedAnswer returns the encoded body of GET /api/meta for cid
	// exactly as written, when the backend keeps one: only a canonical
	// CID of a local file can have one, so a hit needs no parsing, and
	// its answer is the same whatever the request's local and caller.
	CachedAnswer(cid string) ([]byte, bool)
}

// Peer is one entry of GET /api/peers.
type Peer struct {
	ID string `json:"id"`
	// Name is the household name the peer's last answer carried (what it
	// calls itself, verified by no one); left out when it sent none.
	Name  string   `json:"name,omitempty"`
	Addrs []string `json:"addrs"`
	// Connection is "direct" when the node holds a direct connection to
	// the peer, else "relayed" (only connections through a circuit relay).
	Connection string `json:"connection"`
	// Transport is the transport of the connection streams take: "tcp",
	// "quic-v1", … (of the hop to the relay for a relayed one).
	Transport string `json:"transport"`
	// Relay is the relay's peer ID, for a relayed connection.
	Relay     string  `json:"relay,omitempty"`
	LatencyMs float64 `json:"latencyMs,omitempty"`
}

// Status is the JSON shape of GET /api/status.
type Status struct {
	Version string `json:"version"`
	// Name is the household's own name (--name), which its records and
	// search answers carry.
	Name   string   `json:"name"`
	PeerID string   `json:"peerId"`
	Addrs  []string `json:"addrs"`
	// Libraries are the library folders (absolute paths): copy files into
	// one and the node ingests them.
	Libraries []string `json:"libraries"`
	// Roots counts every file of the store: local files, their sidecars
	// and files known only from peers. Files splits them.
	Roots int64 `json:"roots"`
	// Files counts the local files and those known only from peers, as
	// the node's catalog holds them (GET /api/library).
	Files LibraryCounts `json:"files"`
	// LibraryFiles counts the files of the libraries as they are now:
	// every local path the store knows (duplicates and sidecars
	// included), whether a scan or the watcher brought it in. Scan's
	// counts are those of the last full scan only.
	LibraryFiles int64         `json:"libraryFiles"`
	Scan         ScanProgress  `json:"scan"`
	Peers        int           `json:"peers"`
	ProvideQueue int           `json:"provideQueue"`
	Provide      *ProvideStats `json:"provide,omitempty"`
	HashQueue    int           `json:"hashQueue"`
	Redis        RedisStatus   `json:"redis"`
	// Reachability is "public", "private" or "unknown" (AutoNAT v2).
	Reachability string `json:"reachability"`
	// ReachabilityBasis says in words what the reachability rests on:
	// dial-backs that reached or missed, the outside address peers see.
	ReachabilityBasis string `json:"reachabilityBasis"`
	// ReachableAddrs are the addresses AutoNAT v2 confirmed that others
	// can dial.
	ReachableAddrs []string `json:"reachableAddrs"`
	// ObservedAddrs are the addresses peers report seeing the node at
	// (behind NAT, its router's outside address): AutoNAT v2 checks them,
	// and hole punching uses them.
	ObservedAddrs []string `json:"observedAddrs"`
	// Relays are the relays the node may use and its reservations.
	Relays []Relay `json:"relays"`
	// RelayService is true when the node relays for others.
	RelayService bool `json:"relayService"`
	// Sharing says whether peers may fetch the household's files
	// (--share-files), and at what rate.
	Sharing Sharing `json:"sharing"`
	// DataDir is the data directory and its free space.
	DataDir DataDir `json:"dataDir"`
	// Problems are what keeps the node from serving fully, in words,
	// each one a reason GET /ready gives ("data directory full: 0 bytes
	// free on /srv/metamesh"); empty when there is none.
	Problems []string `json:"problems"`
}

// Sharing is the "sharing" part of Status.
type Sharing struct {
	// Enabled: every library file's bytes are shared (--share-files
	// alone), but private folders'.
	Enabled bool `json:"enabled"`
	// Rate is --share-rate in bytes a second; 0 is unlimited.
	Rate int64 `json:"rate"`
	// Folders are the folders whose files' bytes are shared: those of
	// --share-files=DIR and those holding a .metamesh-share the node
	// found (but for those inside a private folder).
	Folders []string `json:"folders"`
	// Private are the folders holding a .metamesh-private the node
	// found: their files are never announced, answered for, listed or
	// served to peers.
	Private []string `json:"private"`
	// Art is --share-art: peers may fetch the artwork of the household's
	// files (their posters) though it does not share them, but a
	// private folder's.
	Art bool `json:"art"`
}

// Relay is one relay of Status: a --relay, or a --bootstrap peer that
// offers the relay service.
type Relay struct {
	ID string `json:"id"`
	// Reserved is true while the node holds a reservation with it.
	Reserved bool `json:"reserved"`
	// Expires is when the reservation ends unless renewed (RFC 3339).
	Expires string `json:"expires,omitempty"`
	// Addrs are the node's addresses through this relay, as peers dial
	// them (…/p2p/<relay>/p2p-circuit/p2p/<node>).
	Addrs []string `json:"addrs,omitempty"`
	// Error is why the last reservation attempt failed.
	Error string `json:"error,omitempty"`
}

// RedisStatus is the "redis" part of Status.
type RedisStatus struct {
	OK      bool   `json:"ok"`
	Managed bool   `json:"managed"`
	Addr    string `json:"addr,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Options configure a Server. The zero value serves loopback rules
// without metrics.
type Options struct {
	// Access says who may call what (access.go).
	Access Access
	// Addr is the address the API listens on, as configured
	// ("0.0.0.0:4680"): the links of invites are made of it.
	Addr string
	// Metrics serves GET /metrics; nil answers 404.
	Metrics http.Handler
	// Registerer, when set, receives the HTTP request metrics
	// (metamesh_http_requests_total, metamesh_http_request_duration_seconds).
	Registerer prometheus.Registerer
	// MaxSubscribers bounds concurrent GET /api/events streams; beyond it
	// a subscriber gets 503. Default 32.
	MaxSubscribers int
	// Heartbeat is the interval of the SSE keep-alive comment. Default 15s.
	Heartbeat time.Duration
	// Strangers bound what clients without the token off loopback may
	// make the node ask its peers (strangers.go); the zero value lets
	// them make it ask none. With Registerer set, refusals are counted
	// in metamesh_api_rate_limited_total{what}.
	Strangers StrangerLimits
	// Stall cuts a client that reads nothing of a file (/api/file) for
	// this long; a slow but steady download goes on. Default 30s.
	Stall time.Duration
	// DAV is the read-only WebDAV share served under /dav/ (dav.go);
	// nil answers 404 there.
	DAV DAV
	// SubtitleWait is how long a subtitle request waits for one of the
	// MaxSubtitleConversions slots before it is answered 503. Default
	// DefaultSubtitleWait.
	SubtitleWait time.Duration
}

// statusClientClosed counts, in metamesh_http_requests_total, a request
// whose client went away before the answer (nginx's 499): not an error of
// the node's.
const statusClientClosed = 499

// Server routes the API.
type Server struct {
	b    Backend
	log  *slog.Logger
	mux  *http.ServeMux
	opts Options
	subs chan struct{} // one token per open event stream
	hm   *httpMetrics  // nil without a Registerer
	// answers are the backend's kept answers, when it keeps any.
	answers AnswerCache
	// strangers are the buckets of clients without the token.
	strangers *strangers
	// streams are the file streams each stranger holds (file.go).
	streams streamCount
	// subtitles are the conversion slots and the WebVTT kept
	// (subtitle.go).
	subtitles subtitles
}

// New builds the routes; it starts nothing.
func New(b Backend, log *slog.Logger, opts Options) *Server {
	if opts.MaxSubscribers <= 0 {
		opts.MaxSubscribers = 32
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.SubtitleWait <= 0 {
		opts.SubtitleWait = DefaultSubtitleWait
	}
	if opts.Stall <= 0 {
		opts.Stall = 30 * time.Second
	}
	s := &Server{b: b, log: log.With("component", "api"), mux: http.NewServeMux(), opts: opts,
		subs: make(chan struct{}, opts.MaxSubscribers)}
	if opts.Registerer != nil {
		s.hm = newHTTPMetrics(opts.Registerer)
	}
	s.strangers = newStrangers(opts.Strangers, maxStrangers, opts.Registerer)
	s.answers, _ = b.(AnswerCache)
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.HandleFunc("GET /ready", s.ready)
	s.mux.HandleFunc("GET /metrics", s.metrics)
	s.mux.HandleFunc("GET /api/status", s.status)
	s.mux.HandleFunc("GET /api/peers", s.peers)
	s.routeSearch()
	s.routeLibrary()
	s.routeHouseholds()
	s.routeDuplicates()
	s.routeWeb()
	s.routeInvites()
	s.routeSnapshot()
	s.routeMembers()
	s.mux.HandleFunc("GET /api/events", s.events)
	s.routeCID("/api/meta", s.meta)
	s.routeEdit()
	s.routeCID("/api/providers", s.providers)
	s.routeCID("/api/file", s.file)
	s.routeCID("/api/sources", s.sources)
	s.routeCID("/api/thumb", s.thumb)
	s.routeCID("/api/subtitle", s.subtitle)
	s.routeStream()
	return s
}

// routeCID routes GET prefix/<cid> to h, and answers precise errors for
// prefix and prefix/ (no CID) and for anything after the CID.
func (s *Server) routeCID(prefix string, h http.HandlerFunc) {
	missing := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, badRequest("missing CID: use %s/<cid>", prefix))
	}
	s.mux.HandleFunc("GET "+prefix, missing)
	s.mux.HandleFunc("GET "+prefix+"/{$}", missing)
	s.mux.HandleFunc("GET "+prefix+"/{cid}", h)
	s.mux.HandleFunc("GET "+prefix+"/{cid}/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		writeErrorCode(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s: %s/<cid> takes nothing after the CID", r.URL.Path, prefix))
	})
}

// ServeHTTP implements http.Handler: access rules first (access.go), then
// the routes. Unknown routes, wrong methods and paths that are not in
// clean form get JSON errors too, never a redirect.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p := r.URL.EscapedPath()
	if clean := cleanPath(p); clean != p {
		s.refuse(w, r, start, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s: the path is not in clean form (did you mean %s?)", p, clean))
		return
	}
	if isDAV(r.URL.Path) {
		s.serveDAV(w, r, start)
		return
	}
	if code, msg := s.opts.Access.check(r); code != 0 {
		if code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metamesh"`)
		}
		s.refuse(w, r, start, code, msg)
		return
	}
	if s.keptAnswer(w, r, p, start) {
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			s.refuse(w, r, start, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
			return
		}
		s.refuse(w, r, start, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	if s.hm == nil {
		s.mux.ServeHTTP(w, r)
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "took", time.Since(start))
		}
		return
	}
	cw := &codeWriter{ResponseWriter: w}
	s.mux.ServeHTTP(cw, r)
	code := cw.status()
	if r.Context().Err() != nil && code >= 500 {
		// The client went away before the answer: nothing failed here.
		code = statusClientClosed
	}
	s.hm.observe(pattern, code, time.Since(start))
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "code", cw.status(), "took", time.Since(start))
	}
}

// metaRoute is the route of GET /api/meta/<cid> in the request metrics.
const metaRoute = "GET /api/meta/{cid}"

// keptAnswer answers GET /api/meta/<cid> with the backend's kept answer
// for the CID as written (AnswerCache), before any routing or parsing,
// and reports whether it did. Whatever it does not answer (a miss, a
// query other than local, any other path) goes through the routes, which
// answer it exactly as they would have: a kept answer is the answer the
// route gives.
func (s *Server) keptAnswer(w http.ResponseWriter, r *http.Request, p string, start time.Time) bool {
	if s.answers == nil || r.Method != http.MethodGet {
		return false
	}
	c, ok := strings.CutPrefix(p, "/api/meta/")
	if !ok || c == "" || strings.IndexByte(c, '/') >= 0 {
		return false
	}
	switch r.URL.RawQuery {
	case "", "local=1", "local=0", "local=true", "local=false":
	default:
		return false
	}
	body, ok := s.answers.CachedAnswer(c)
	if !ok {
		return false
	}
	writeBody(w, http.StatusOK, body)
	if s.hm != nil {
		s.hm.observe(metaRoute, http.StatusOK, time.Since(start))
	}
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "code", http.StatusOK, "took", time.Since(start))
	}
	return true
}

// refuse answers an error the routes never saw, counted under the route
// "other".
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, start time.Time, code int, msg string) {
	writeErrorCode(w, code, msg)
	if s.hm != nil {
		s.hm.observe("other", code, time.Since(start))
	}
	s.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "code", code, "took", time.Since(start))
}

// cleanPath is p with "." and ".." elements and repeated slashes
// resolved, a trailing slash kept (as net/http cleans request paths).
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

type statusRecorder struct {
	header http.Header
	code   int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(code int)        { r.code = code }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	if err := s.b.Ready(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.opts.Metrics == nil {
		writeErrorCode(w, http.StatusNotFound, "metrics are not enabled on this server")
		return
	}
	// The Prometheus handler reads name[] (repeatable: only the metric
	// families named); a scrape configured with any other parameter
	// (params:) is told so rather than silently ignored.
	if err := onlyParams(r.URL.Query(), "name[]"); err != nil {
		writeError(w, err)
		return
	}
	s.opts.Metrics.ServeHTTP(w, r)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	st, err := s.b.Status(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) meta(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := onlyParams(q, "local"); err != nil {
		writeError(w, err)
		return
	}
	local, err := boolParam(q, "local")
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := ParseCID(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	doc, err := s.b.Meta(r.Context(), c, local, s.caller(r))
	if err != nil {
		s.logFailure(r, "meta lookup", err, "cid", c)
		writeError(w, err)
		return
	}
	if b := doc.Encoded(); b != nil {
		writeBody(w, http.StatusOK, b)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

func (s *Server) providers(w http.ResponseWriter, r *http.Request) {
	c, ok := cidRequest(w, r)
	if !ok {
		return
	}
	ps, err := s.b.Providers(r.Context(), c)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ProvidersAnswer{CID: c, Providers: ps})
}

func (s *Server) peers(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	ps, err := s.b.Peers(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, PeersAnswer{Peers: ps})
}
