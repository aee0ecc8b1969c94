package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "run --library DIR [--library DIR...]",
		Short: "Run a node: ingest and watch the libraries, serve the HTTP API",
		Long: `Run a node on one or more library directories. Without --redis-url it starts
and supervises its own redis-server with append-only persistence under
DATA/redis. Every flag also reads an environment variable (METAMESH_LIBRARY,
METAMESH_DATA, METAMESH_REDIS_URL, METAMESH_API, ...); list variables are
comma-separated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := nodeConfig(cmd)
			if err != nil {
				return err
			}
			cfg.APIAddr, _ = cmd.Flags().GetString("api")
			f := cmd.Flags()
			cfg.Name, _ = f.GetString("name")
			cfg.P2P.Listen, _ = f.GetStringArray("listen")
			cfg.P2P.Bootstrap, _ = f.GetStringArray("bootstrap")
			cfg.P2P.Announce, _ = f.GetStringArray("announce")
			cfg.P2P.NATPortMap, _ = f.GetBool("nat-portmap")
			cfg.P2P.SwarmKeyFile, _ = f.GetString("swarm-key")
			cfg.P2P.AllowPeers, _ = f.GetStringArray("allow-peer")
			cfg.P2P.DHTMode, _ = f.GetString("dht-mode")
			cfg.P2P.Relays, _ = f.GetStringArray("relay")
			cfg.P2P.RelayService, _ = f.GetBool("relay-service")
			punch, _ := f.GetBool("hole-punching")
			cfg.P2P.NoHolePunching = !punch
			index, _ := f.GetBool("search-index")
			cfg.NoSearchIndex = !index
			cfg.LibraryVisible, _ = f.GetString("library-visible")
			learn, _ := f.GetBool("learn-from-peers")
			cfg.NoLearning = !learn
			cfg.P2P.ConnLow, _ = f.GetInt("conn-low")
			cfg.P2P.ConnHigh, _ = f.GetInt("conn-high")
			cfg.ReprovideInterval, _ = f.GetDuration("reprovide-interval")
			cfg.LookupTimeout, _ = f.GetDuration("lookup-timeout")
			cfg.PeerRootsMax, _ = f.GetInt("peer-roots-max")
			cfg.MetaCache, _ = f.GetInt("meta-cache")
			cfg.PeerRecordTTL, _ = f.GetDuration("peer-record-ttl")
			cfg.APITokenFile, _ = f.GetString("api-token-file")
			cfg.PublicRead, _ = f.GetBool("public-read")
			cfg.APIHosts, _ = f.GetStringArray("api-host")
			cfg.StrangerRate, _ = f.GetFloat64("stranger-rate")
			cfg.StrangerBurst, _ = f.GetInt("stranger-burst")
			share, _ := f.GetStringArray("share-files")
			cfg.ShareFiles, cfg.ShareFolders = shareFiles(share)
			cfg.Stills, _ = f.GetBool("stills")
			cfg.Users, _ = f.GetStringSlice("users")
			if cfg.ShareRate, err = parseRate(f.Lookup("share-rate").Value.String()); err != nil {
				return usageError(cmd, fmt.Errorf("--share-rate: %w", err))
			}
			shareArt, _ := f.GetBool("share-art")
			cfg.NoShareArt = !shareArt
			if cfg.ArtCache, err = parseSize(f.Lookup("art-cache").Value.String()); err != nil {
				return usageError(cmd, fmt.Errorf("--art-cache: %w", err))
			}
			cfg.Transcodes, _ = f.GetInt("transcodes")
			if cfg.TranscodeCache, err = parseSize(f.Lookup("transcode-cache").Value.String()); err != nil {
				return usageError(cmd, fmt.Errorf("--transcode-cache: %w", err))
			}
			// Under systemd (Type=notify) the node says when it serves;
			// the socket is taken out of the environment so that the
			// managed redis-server does not answer it too.
			cfg.NotifySocket = os.Getenv("NOTIFY_SOCKET")
			os.Unsetenv("NOTIFY_SOCKET")
			return node.Run(cmd.Context(), cfg)
		},
	}
	libraryFlags(c)
	f := c.Flags()
	defer func() { f.Lookup("share-files").NoOptDefVal = "true" }()
	f.String("api", node.DefaultAPIAddr, "HTTP API listen address (env METAMESH_API)")
	f.String("name", "", "the household's name, shown to peers instead of its peer ID: UTF-8, at most 64 bytes, no control characters (default: the host name; env METAMESH_NAME)")
	f.StringArray("listen", nil, "libp2p listen multiaddr; repeat for more (default /ip4/0.0.0.0/tcp/4681 and /ip4/0.0.0.0/udp/4681/quic-v1; env METAMESH_LISTEN)")
	f.StringArray("bootstrap", nil, "peer to join through, …/p2p/<peerID>; redialled whenever not connected; repeat for more (env METAMESH_BOOTSTRAP)")
	f.StringArray("announce", nil, "address to tell peers instead of the listen addresses (behind NAT, in a container); repeat for more (env METAMESH_ANNOUNCE)")
	f.Bool("nat-portmap", false, "ask the router for a port mapping (UPnP/NAT-PMP); off: the node never reaches out on its own (env METAMESH_NAT_PORTMAP)")
	f.String("swarm-key", "", "private federation: a /key/swarm/psk/1.0.0/ key file; only nodes with the same key connect (TCP only) (env METAMESH_SWARM_KEY)")
	f.StringArray("allow-peer", nil, "connect only with these peer IDs; repeat for more (env METAMESH_ALLOW_PEER)")
	f.String("dht-mode", "auto", "DHT mode: auto (a server unless AutoNAT finds the node behind NAT, then a client), server or client (env METAMESH_DHT_MODE)")
	f.StringArray("relay", nil, "a circuit relay to keep a reservation with while not publicly reachable, …/p2p/<peerID>; repeat for more (env METAMESH_RELAY)")
	f.Bool("relay-service", false, "relay for other households (circuit relay v2, libp2p's default limits); for a publicly reachable node (env METAMESH_RELAY_SERVICE)")
	f.Bool("search-index", true, "provide on the DHT a key for every word of the local files' titles, IDs and genres, so that federated searches anywhere in the federation find this household; --search-index=false stops it (searching others and answering their searches go on) (env METAMESH_SEARCH_INDEX)")
	f.Bool("learn-from-peers", true, "ask the households that have the same files for what they know of them (titles, plots, IDs, posters), a few files a minute in the background, and show it where this household has nothing of its own; --learn-from-peers=false stops it (env METAMESH_LEARN_FROM_PEERS)")
	f.String("library-visible", node.LibraryVisibleFriends, "who may see this household's list of films and shows (titles, years, posters, sizes; never paths or home videos): friends (the peers named with --bootstrap or --allow-peer), everyone, or none (env METAMESH_LIBRARY_VISIBLE)")
	f.Bool("hole-punching", true, "upgrade relayed connections to direct ones where the NATs allow (DCUtR); --hole-punching=false turns it off (env METAMESH_HOLE_PUNCHING)")
	f.Int("conn-low", 100, "connection manager low watermark (env METAMESH_CONN_LOW)")
	f.Int("conn-high", 400, "connection manager high watermark (env METAMESH_CONN_HIGH)")
	f.Duration("reprovide-interval", 22*time.Hour, "how often every announced CID is provided again; 0 means the default (22h), not never (env METAMESH_REPROVIDE_INTERVAL)")
	f.Duration("lookup-timeout", 10*time.Second, "how long a federated lookup may take before 404 (env METAMESH_LOOKUP_TIMEOUT)")
	f.Int("peer-roots-max", 100_000, "files known only from peers kept at most; the least recently used go (env METAMESH_PEER_ROOTS_MAX)")
	f.Int("meta-cache", 10_000, "documents GET /api/meta keeps in memory, with their encoded answers (about 1.4 KB each); 0 means the default, -1 keeps none (env METAMESH_META_CACHE)")
	f.Duration("peer-record-ttl", time.Hour, "how old what peers said of a file may get before a lookup asks them again (negative: never; env METAMESH_PEER_RECORD_TTL)")
	f.String("api-token-file", "", "bearer token file the API requires off loopback; generated (mode 0600) when missing (default DATA/api-token; env METAMESH_API_TOKEN_FILE)")
	f.Bool("public-read", false, "off loopback, serve GET /api/meta, /api/search, /api/library and /api/file without the token (env METAMESH_PUBLIC_READ)")
	f.Float64("stranger-rate", 2, "off loopback, how many federated lookups and searches per second a client on another machine without the token (one per IPv4 address or IPv6 /64) may make the node start; past it 429 with Retry-After; 0: none (env METAMESH_STRANGER_RATE)")
	f.Int("stranger-burst", 10, "how many of those such a client may start at once; 0 means the default (10) (env METAMESH_STRANGER_BURST)")
	f.StringArray("share-files", nil, "let the federation's households (and IPFS nodes the host admits) fetch this household's files' bytes over bitswap, read from the library in place: alone, every file; --share-files=DIR, the files under DIR (a folder inside a library; repeat for more); a folder's .metamesh-share shares it too, and a .metamesh-private folder is never shared, announced or answered for; otherwise peers' wants are answered DONT_HAVE (env METAMESH_SHARE_FILES: true, or comma-separated folders)")
	f.String("share-rate", "0", "with --share-files, the most bytes a second served to peers, all together: 0 (unlimited), or a size such as 500k, 2M, 1.5MiB (env METAMESH_SHARE_RATE)")
	f.Bool("stills", true, "give every video without a poster a still: a frame ffmpeg takes a tenth of the way in, after the scan, one at a time and niced, kept under DATA/stills and shown by lists and the player; --stills=false makes none (env METAMESH_STILLS)")
	f.StringSlice("users", nil, "members of the household, comma-separated (alice,bob): each keeps how far it watched every film, on any device; more are made on the page (env METAMESH_USERS)")
	f.Bool("share-art", true, "let the federation's households fetch the artwork of this household's files (the posters and fan art their fields link, small images), so that their pages show them, even without --share-files; no other file is served for it; --share-art=false turns it off (env METAMESH_SHARE_ART)")
	f.String("art-cache", "500MiB", "the most bytes of other households' artwork kept under DATA/art, a size such as 200M or 1GiB; the least recently used go first (env METAMESH_ART_CACHE)")
	f.Int("transcodes", 1, "how many ffmpeg processes may convert files for browsers that cannot play them as they are, at once (niced); a player past them waits 10 s, then gets 503 (env METAMESH_TRANSCODES)")
	f.String("transcode-cache", "2GiB", "the most bytes of converted streams kept under DATA/transcode, a size such as 500M or 4GiB; the least recently used go first (env METAMESH_TRANSCODE_CACHE)")
	f.StringArray("api-host", nil, "another Host header name the API answers on loopback, besides localhost, 127.0.0.1 and [::1]; repeat for more (env METAMESH_API_HOST)")
	return c
}

// shareFiles reads --share-files' values: a boolean (the flag alone is
// "true") says whether every file is shared; any other value is a folder
// whose files are. A folder named like a boolean is written as a path
// ("./true").
func shareFiles(vals []string) (all bool, folders []string) {
	for _, v := range vals {
		if b, err := strconv.ParseBool(v); err == nil {
			all = b
			continue
		}
		folders = append(folders, v)
	}
	return all, folders
}

// libraryFlags adds the flags of commands that ingest.
func libraryFlags(c *cobra.Command) {
	c.Flags().StringArray("library", nil, "library directory to ingest; repeat for more (env METAMESH_LIBRARY, comma-separated)")
	storeFlags(c)
	c.Flags().Int("workers", 0, "concurrent hashing workers; 0 (the default) means one per CPU (env METAMESH_WORKERS)")
	c.Flags().Duration("settle", 2*time.Second, "how long a file must be unchanged before it is hashed (env METAMESH_SETTLE)")
}

func nodeConfig(cmd *cobra.Command) (node.Config, error) {
	log, err := logger(cmd, os.Stderr)
	if err != nil {
		return node.Config{}, err
	}
	cfg := node.Config{Logger: log}
	cfg.Libraries, _ = cmd.Flags().GetStringArray("library")
	cfg.DataDir, _ = cmd.Flags().GetString("data")
	cfg.RedisURL, _ = cmd.Flags().GetString("redis-url")
	cfg.Workers, _ = cmd.Flags().GetInt("workers")
	cfg.Settle, _ = cmd.Flags().GetDuration("settle")
	return cfg, nil
}

// parseSize reads a size in bytes, with parseRate's units (no "/s"); 0
// is the default.
func parseSize(s string) (int64, error) {
	if strings.HasSuffix(strings.TrimSpace(s), "/s") {
		return 0, fmt.Errorf("%q is a rate: want a size such as 200M or 1GiB", s)
	}
	v, err := parseRate(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: want bytes, such as 200M, 500MiB or 1GiB", s)
	}
	return v, nil
}

// parseRate reads a byte rate: a number with an optional unit, k/M/G
// (powers of 1000, B optional) or KiB/MiB/GiB (powers of 1024), per
// second; 0 is unlimited. A rate above 0 but under 1 byte a second is
// refused, not rounded to 0: "0.5" meant as 0.5 MB/s would otherwise be
// no limit at all.
func parseRate(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "ps")
	num := strings.TrimRightFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	unit := strings.TrimSpace(t[len(num):])
	mult := map[string]float64{"": 1, "B": 1, "k": 1e3, "K": 1e3, "kB": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v < 0 || v*mult > 1<<50 {
		return 0, fmt.Errorf("%q is not a rate: want bytes a second, such as 0 (unlimited), 500k, 2M or 1.5MiB", s)
	}
	if r := v * mult; r > 0 && r < 1 {
		return 0, fmt.Errorf("%q is %g bytes a second, under 1: the rate is in bytes a second, so for %s MB/s write %sM (0 is unlimited)", s, r, num, num)
	}
	return int64(v * mult), nil
}
