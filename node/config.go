package node

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p-kad-dht/amino"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/announce"
	"github.com/metamesh/node/node/federation"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/node/privacy"
	"github.com/metamesh/node/protocol"
)

// DefaultAPIAddr is where the HTTP API listens unless told otherwise:
// loopback only.
const DefaultAPIAddr = "127.0.0.1:4680"

// Config configures a node. Every field has a flag and an environment
// twin in cmd/metamesh.
type Config struct {
	// Libraries are the media directories to ingest (--library,
	// METAMESH_LIBRARY). Required.
	Libraries []string
	// DataDir holds the managed Redis data (--data, METAMESH_DATA).
	// Default DefaultDataDir() ($XDG_DATA_HOME/metamesh, else
	// $HOME/.local/share/metamesh), the default of every command.
	DataDir string
	// RedisURL of an external Redis (--redis-url, METAMESH_REDIS_URL).
	// Empty: start and supervise a redis-server under DataDir/redis.
	RedisURL string
	// APIAddr for the HTTP API (--api, METAMESH_API). Default
	// 127.0.0.1:4680.
	APIAddr string
	// Name is the household's name (--name, METAMESH_NAME): what peers
	// show instead of its peer ID, sent in its records and search
	// answers. Trimmed; it must pass protocol.CheckName (UTF-8, at most
	// 64 bytes, no control characters). Default: the host name
	// (os.Hostname, cleaned by protocol.CleanName).
	Name string
	// Workers bounds concurrent hashing (--workers). 0: one per CPU.
	Workers int
	// Settle is how long a file must be still before it is hashed
	// (--settle). Default 2s.
	Settle time.Duration

	// P2P is the libp2p host's and the DHT's part: --listen,
	// --bootstrap, --announce, --nat-portmap, --swarm-key, --allow-peer,
	// --dht-mode, --relay, --relay-service, --hole-punching, --conn-low
	// and --conn-high (p2p.Config says what each does), with what
	// programs that embed a node set (Gater, BandwidthReporter) and tests
	// shorten (ProviderRecordTTL).
	P2P p2p.Config

	// NoSearchIndex stops providing search token keys
	// (--search-index=false): peers' federated searches then find the
	// household only when connected to it. It still searches others and
	// answers their searches.
	NoSearchIndex bool
	// NoLearning stops asking peers about the household's own files
	// (--learn-from-peers=false): what other households know of them
	// (titles, plots, IDs, posters) is then not filled in where the
	// household has nothing of its own (federation.HouseholdConfig's
	// LearnFromPeers).
	NoLearning bool
	// LearnInterval and LearnIdleInterval are the learner's pace while
	// the node scans and at idle (zero: the federation's defaults; tests
	// shorten them).
	LearnInterval, LearnIdleInterval time.Duration
	// LibraryVisible says which peers may see the household's list of
	// films and shows (the library protocol; --library-visible):
	// LibraryVisibleFriends (the default) the peers it named (its
	// --bootstrap and --allow-peer peers) and those it connected to on
	// its own word (Node.Connect), LibraryVisibleEveryone any peer that
	// asks, LibraryVisibleNone no one. A peer not allowed is refused.
	LibraryVisible string
	// ShareFiles answers peers' bitswap wants for the blocks of the
	// local files (--share-files): households of the federation (and any
	// IPFS node the host admits) may then fetch them by their IPFS CID.
	// Off, every want is answered DONT_HAVE; fetching peers' files works
	// either way.
	ShareFiles bool
	// ShareFolders share the bytes of the files under these folders
	// only (--share-files=DIR, repeatable), each inside a library (Validate
	// refuses one that is not). Marker files share or keep private a
	// folder besides (node/privacy): a .metamesh-private folder's files
	// are neither announced, answered for nor served, whatever is
	// shared.
	ShareFolders []string
	// ShareRate caps the bytes a second served to peers, all together
	// (--share-rate); 0 is unlimited.
	ShareRate int64
	// NoShareArt stops serving the artwork of the local files
	// (--share-art=false): the images their art/<kind> fields link,
	// which peers fetch to show the files' posters. On by default,
	// whatever ShareFiles says; no other file is served for it.
	NoShareArt bool
	// ArtCache caps the bytes of peers' artwork kept under DATA/art
	// (--art-cache); 0 is the default, 500 MiB. The least recently
	// used images go first.
	ArtCache int64
	// Transcodes caps the ffmpeg processes making streams for browsers
	// that cannot play a file as it is, at once (--transcodes); 0 is the
	// default, 1.
	Transcodes int
	// TranscodeCache caps the bytes of those streams kept under
	// DATA/transcode (--transcode-cache); 0 is the default, 2 GiB. The
	// least recently used go first.
	TranscodeCache int64
	// ReprovideInterval is how often every announced CID is provided again
	// (--reprovide-interval), region by region by the sweeping provider.
	// 0: the default, 22h; announcing cannot be turned off. With the
	// provider's slack (an hour, or a tenth of a shorter interval) it must
	// end before provider records expire (P2P.ProviderRecordTTL, 48h).
	ReprovideInterval time.Duration
	// LookupTimeout bounds a federated lookup (--lookup-timeout). Default
	// 10s: an unknown CID answers 404 within it.
	LookupTimeout time.Duration
	// PeerRootsMax caps the roots known only from peers (--peer-roots-max,
	// default 100000): the least recently used are evicted.
	PeerRootsMax int
	// MetaCache is how many documents GET /api/meta keeps in memory
	// (--meta-cache): 0 means the default, 10000 (some 40 MB); -1 keeps
	// none. The cache follows the node's own writes and, through keyspace
	// notifications, outside writers' (store.Options.DocCache).
	MetaCache int
	// PeerRecordTTL is how old what peers said of a file may get before a
	// lookup asks them again and replaces it (--peer-record-ttl, default
	// 1h; negative never asks again).
	PeerRecordTTL time.Duration

	// Stills gives every local video without a poster a still, a frame
	// ffmpeg takes from it after the first scan, one at a time and niced
	// (--stills, METAMESH_STILLS; node/stills). Off, or without ffmpeg
	// on the PATH, lists show such videos without an image.
	Stills bool

	// Users are members of the household the node makes at start, if
	// missing (--users, METAMESH_USERS): each a name of 1 to 40 letters,
	// digits, spaces, - or _ (model.CheckMemberName). More are made on
	// the page; members are kept in the store.
	Users []string

	// APITokenFile holds the bearer token the API requires on a
	// non-loopback APIAddr (--api-token-file, METAMESH_API_TOKEN_FILE).
	// Default DataDir/api-token, generated (mode 0600) when missing.
	APITokenFile string
	// PublicRead opens GET /api/meta, /api/search, /api/library and
	// /api/file without the token on a non-loopback APIAddr
	// (--public-read).
	PublicRead bool
	// APIHosts are more Host header names the API answers on loopback
	// (--api-host), besides localhost, 127.0.0.1 and [::1].
	APIHosts []string
	// NotifySocket is the service manager's notify socket (systemd's
	// NOTIFY_SOCKET, for a Type=notify unit): Run sends READY=1 on it
	// once the node serves and STOPPING=1 when it begins to stop. Empty:
	// none is told.
	NotifySocket string
	// StrangerRate is how many federated lookups and searches per second
	// a stranger may make the node start: a client of a non-loopback
	// APIAddr that connects from another machine without the token
	// (--stranger-rate; the flag's default is 2). Counted per IPv4
	// address or IPv6 /64 (api.StrangerLimits). 0, the zero value, gives
	// strangers none: what the node holds is all they get.
	StrangerRate float64
	// StrangerBurst is how many of them a stranger may start at once
	// (--stranger-burst). Default 10.
	StrangerBurst int

	// Logger; default slog.Default().
	Logger *slog.Logger
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir()
	}
	if c.APIAddr == "" {
		c.APIAddr = DefaultAPIAddr
	}
	if c.Name = strings.TrimSpace(c.Name); c.Name == "" {
		host, _ := os.Hostname()
		c.Name = protocol.CleanName(host)
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
	if c.LibraryVisible == "" {
		c.LibraryVisible = LibraryVisibleFriends
	}
	c.P2P.SetDefaults()
	if c.ReprovideInterval == 0 {
		c.ReprovideInterval = federation.DefaultReprovideInterval
	}
	if c.LookupTimeout == 0 {
		c.LookupTimeout = federation.DefaultLookupTimeout
	}
	if c.PeerRootsMax == 0 {
		c.PeerRootsMax = 100_000
	}
	if c.PeerRecordTTL == 0 {
		c.PeerRecordTTL = federation.DefaultPeerRecordTTL
	}
	if c.MetaCache == 0 {
		c.MetaCache = 10_000
	}
	if c.StrangerBurst == 0 {
		c.StrangerBurst = 10
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate names the first bad setting, by its flag, and its value. Paths
// are compared absolute with symlinks resolved: a data directory that
// would be ingested as part of a library (the node would hash its own
// Redis files forever) is refused.
func (c *Config) Validate() error {
	if err := c.validate(); err != nil {
		return configError{err}
	}
	return nil
}

// ErrConfig is wrapped by every error of Validate: a value the node
// refuses (the message names its flag).
var ErrConfig = errors.New("invalid configuration")

type configError struct{ error }

func (e configError) Unwrap() []error { return []error{e.error, ErrConfig} }

// validate is Validate's work.
func (c *Config) validate() error {
	libs, err := ingest.Libraries(c.Libraries)
	if err != nil {
		return fmt.Errorf("config: %w (--library)", err)
	}
	if c.RedisURL == "" && c.DataDir == "" {
		return fmt.Errorf("config: --data: required when no --redis-url is given")
	}
	if c.DataDir != "" {
		data, err := resolve(c.DataDir)
		if err != nil {
			return fmt.Errorf("config: --data %q: %w", c.DataDir, err)
		}
		for _, lib := range libs {
			if ingested(lib, data) {
				return fmt.Errorf("config: --data: the data directory %s is inside the library %s, so the node would ingest its own Redis files; choose a data directory outside every library", data, lib)
			}
		}
	}
	if err := protocol.CheckName(c.Name); err != nil {
		return fmt.Errorf("config: --name: %w", err)
	}
	switch c.LibraryVisible {
	case LibraryVisibleEveryone, LibraryVisibleFriends, LibraryVisibleNone:
	default:
		return fmt.Errorf("config: --library-visible %q: want everyone, friends or none", c.LibraryVisible)
	}
	if _, _, err := net.SplitHostPort(c.APIAddr); err != nil {
		return fmt.Errorf("config: --api %q: %w", c.APIAddr, err)
	}
	for _, u := range c.Users {
		if err := model.CheckMemberName(u); err != nil {
			return fmt.Errorf("config: --users: %w", err)
		}
	}
	if c.Workers < 0 {
		return fmt.Errorf("config: --workers %d: may not be negative (0: one per CPU)", c.Workers)
	}
	if c.ArtCache < 0 {
		return fmt.Errorf("config: --art-cache %d: may not be negative (bytes; 0 is the default, 500 MiB)", c.ArtCache)
	}
	if c.Transcodes < 0 {
		return fmt.Errorf("config: --transcodes %d: may not be negative (0 is the default, 1)", c.Transcodes)
	}
	if c.TranscodeCache < 0 {
		return fmt.Errorf("config: --transcode-cache %d: may not be negative (bytes; 0 is the default, 2 GiB)", c.TranscodeCache)
	}
	if _, err := privacy.New(privacy.Config{Libraries: libs, Shared: c.ShareFolders}); err != nil {
		return fmt.Errorf("config: --share-files: %w", err)
	}
	if c.ShareRate < 0 {
		return fmt.Errorf("config: --share-rate %d: may not be negative (bytes a second; 0 is unlimited)", c.ShareRate)
	}
	if c.Settle < 0 {
		return fmt.Errorf("config: --settle %s: may not be negative", c.Settle)
	}
	if err := c.P2P.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.ReprovideInterval < 0 {
		return fmt.Errorf("config: --reprovide-interval %s: may not be negative", c.ReprovideInterval)
	}
	// A region is reprovided at most maxReprovideDelay late: it must still
	// be before the records it renews expire.
	ttl := c.P2P.ProviderRecordTTL
	if ttl == 0 {
		ttl = amino.DefaultProvideValidity
	}
	if iv := c.ReprovideInterval; iv > 0 && iv+announce.MaxReprovideDelay(iv) >= ttl {
		return fmt.Errorf("config: --reprovide-interval %s: with the provider's %s of slack a cycle must end before provider records expire (%s)",
			iv, announce.MaxReprovideDelay(iv), ttl)
	}
	if c.LookupTimeout < 0 {
		return fmt.Errorf("config: --lookup-timeout %s: may not be negative", c.LookupTimeout)
	}
	if c.MetaCache < -1 {
		return fmt.Errorf("config: --meta-cache %d: -1 (none), 0 (the default) or a number of documents", c.MetaCache)
	}
	if c.PeerRootsMax < 0 {
		return fmt.Errorf("config: --peer-roots-max %d: may not be negative", c.PeerRootsMax)
	}
	switch r := c.StrangerRate; {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return fmt.Errorf("config: --stranger-rate %g: want a number of lookups and searches per second (0: none)", r)
	case r < 0:
		return fmt.Errorf("config: --stranger-rate %g: may not be negative (0: strangers make the node ask its peers nothing)", r)
	}
	if c.StrangerBurst < 0 {
		return fmt.Errorf("config: --stranger-burst %d: may not be negative (0: the default, 10)", c.StrangerBurst)
	}
	return nil
}

// absolute puts library and data paths in the form stored paths take
// (absolute; libraries also with symlinks resolved, repeats and nested
// libraries dropped), so logs, status and the store never depend on the
// working directory. It returns the libraries given that were dropped,
// as they were given.
func (c *Config) absolute() (dropped []string, err error) {
	libs, err := ingest.Libraries(c.Libraries)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(libs) < len(c.Libraries) {
		kept := make(map[string]bool, len(libs))
		for _, l := range libs {
			kept[l] = true
		}
		for _, l := range c.Libraries {
			one, err := ingest.Libraries([]string{l})
			if err != nil {
				return nil, fmt.Errorf("config: %w", err)
			}
			if kept[one[0]] {
				delete(kept, one[0]) // a second spelling of it is dropped
			} else {
				dropped = append(dropped, l)
			}
		}
	}
	c.Libraries = libs
	if c.DataDir != "" {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			return nil, fmt.Errorf("config: --data %q: %w", c.DataDir, err)
		}
		c.DataDir = abs
	}
	return dropped, nil
}

// logDropped says, in one line, which libraries are scanned as part of
// another one.
func logDropped(log *slog.Logger, dropped, libs []string) {
	if len(dropped) > 0 {
		log.Warn("libraries given twice or inside another library are scanned once, as part of the library that holds them", "dropped", dropped, "libraries", libs)
	}
}

// resolve makes p absolute and resolves the symlinks of its longest
// existing ancestor, so a directory that does not exist yet compares like
// the one it will be.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// ingested reports whether ingest of lib would walk into dir: dir is lib
// or inside it, and no directory on the way is skipped (hidden, like
// ~/.local under a library of ~).
func ingested(lib, dir string) bool {
	rel, err := filepath.Rel(lib, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	if rel == "." {
		return true
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if ingest.Skipped(name) {
			return false
		}
	}
	return true
}
