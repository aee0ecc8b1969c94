package node_test

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
)

// TestConfig_ValidateNamesFlags: every refusal names the flag of the bad
// setting and its value, and only that value; never a field of Config.
func TestConfig_ValidateNamesFlags(t *testing.T) {
	t.Parallel()
	lib, _ := filepath.EvalSymlinks(t.TempDir())
	data := t.TempDir()
	const id = "12D3KooWBMpvJr2o9bmFxYoAnKpqgajzfqcinCRrH9vVktjt7TBn"
	tests := []struct {
		name string
		set  func(*node.Config)
		want string // the whole message, or its start when it ends with "…"
	}{
		{"data inside the library", func(c *node.Config) { c.DataDir = filepath.Join(lib, "mm") },
			"config: --data: the data directory " + filepath.Join(lib, "mm") + " is inside the library " + lib + "…"},
		{"api", func(c *node.Config) { c.APIAddr = "nonsense" }, `config: --api "nonsense": …`},
		{"workers", func(c *node.Config) { c.Workers = -3 }, "config: --workers -3: may not be negative (0: one per CPU)"},
		{"meta cache", func(c *node.Config) { c.MetaCache = -2 }, "config: --meta-cache -2: -1 (none), 0 (the default) or a number of documents"},
		{"settle", func(c *node.Config) { c.Settle = -time.Second }, "config: --settle -1s: may not be negative"},
		{"share-rate", func(c *node.Config) { c.ShareRate = -1 }, "config: --share-rate -1: may not be negative (bytes a second; 0 is unlimited)"},
		{"art-cache", func(c *node.Config) { c.ArtCache = -1 }, "config: --art-cache -1: may not be negative (bytes; 0 is the default, 500 MiB)"},
		{"transcodes", func(c *node.Config) { c.Transcodes = -1 }, "config: --transcodes -1: may not be negative (0 is the default, 1)"},
		{"transcode-cache", func(c *node.Config) { c.TranscodeCache = -2 }, "config: --transcode-cache -2: may not be negative (bytes; 0 is the default, 2 GiB)"},
		{"listen", func(c *node.Config) { c.P2P.Listen = []string{"/ip4/127.0.0.1/tcp/0", "bogus"} }, `config: --listen "bogus": …`},
		{"listen QUIC, private", func(c *node.Config) {
			c.P2P.SwarmKeyFile, c.P2P.Listen = "swarm.key", []string{"/ip4/127.0.0.1/udp/0/quic-v1"}
		}, `config: --listen "/ip4/127.0.0.1/udp/0/quic-v1" is QUIC, and QUIC cannot run a private network (--swarm-key); listen on TCP only`},
		{"bootstrap", func(c *node.Config) { c.P2P.Bootstrap = []string{"bogus"} }, `config: --bootstrap "bogus": …`},
		{"bootstrap without a peer ID", func(c *node.Config) {
			c.P2P.Bootstrap = []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id, "/ip4/10.0.0.2/tcp/4681"}
		}, `config: --bootstrap "/ip4/10.0.0.2/tcp/4681": …`},
		{"bootstrap QUIC, private", func(c *node.Config) {
			c.P2P.SwarmKeyFile, c.P2P.Bootstrap = "swarm.key", []string{"/ip4/10.0.0.1/udp/4681/quic-v1/p2p/" + id}
		}, "config: --bootstrap /ip4/10.0.0.1/udp/4681/quic-v1/p2p/" + id + " is QUIC…"},
		{"relay", func(c *node.Config) { c.P2P.Relays = []string{"bogus"} }, `config: --relay "bogus": …`},
		{"relay without a peer ID", func(c *node.Config) { c.P2P.Relays = []string{"/ip4/10.0.0.2/tcp/4681"} }, `config: --relay "/ip4/10.0.0.2/tcp/4681": …`},
		{"relay through a relay", func(c *node.Config) {
			c.P2P.Relays = []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id + "/p2p-circuit/p2p/" + id}
		}, `config: --relay "/ip4/10.0.0.1/tcp/4681/p2p/` + id + `/p2p-circuit/p2p/` + id + `" goes through another relay; give the relay's own address`},
		{"relay QUIC, private", func(c *node.Config) {
			c.P2P.SwarmKeyFile, c.P2P.Relays = "swarm.key", []string{"/ip4/10.0.0.1/udp/4681/quic-v1/p2p/" + id}
		}, "config: --relay /ip4/10.0.0.1/udp/4681/quic-v1/p2p/" + id + " is QUIC…"},
		{"announce", func(c *node.Config) { c.P2P.Announce = []string{"x"} }, `config: --announce "x": …`},
		{"announce with a relay", func(c *node.Config) {
			c.P2P.Relays = []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id}
			c.P2P.Announce = []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id + "/p2p-circuit", "/ip4/203.0.113.7/tcp/4681"}
		}, `config: --announce "/ip4/203.0.113.7/tcp/4681" with --relay: the announced addresses replace the relay's circuit addresses, so no household could reach this node through its relay; leave --announce out, or announce /p2p-circuit addresses only`},
		{"allow-peer", func(c *node.Config) { c.P2P.AllowPeers = []string{id, "x"} }, `config: --allow-peer "x": …`},
		{"dht-mode", func(c *node.Config) { c.P2P.DHTMode = "x" }, `config: --dht-mode "x": want auto, server or client`},
		{"conn-low", func(c *node.Config) { c.P2P.ConnLow = -1 }, "config: --conn-low -1: may not be negative"},
		{"conn-high", func(c *node.Config) { c.P2P.ConnLow, c.P2P.ConnHigh = 5, 3 }, "config: --conn-high 3: must be above --conn-low 5"},
		{"reprovide-interval", func(c *node.Config) { c.ReprovideInterval = -time.Hour }, "config: --reprovide-interval -1h0m0s: may not be negative"},
		{"reprovide-interval past the records", func(c *node.Config) { c.ReprovideInterval = 47*time.Hour + 30*time.Minute },
			"config: --reprovide-interval 47h30m0s: with the provider's 1h0m0s of slack a cycle must end before provider records expire (48h0m0s)"},
		{"reprovide-interval past short records", func(c *node.Config) { c.ReprovideInterval, c.P2P.ProviderRecordTTL = 10*time.Second, 10*time.Second },
			"config: --reprovide-interval 10s: with the provider's 1s of slack a cycle must end before provider records expire (10s)"},
		{"lookup-timeout", func(c *node.Config) { c.LookupTimeout = -time.Second }, "config: --lookup-timeout -1s: may not be negative"},
		{"peer-roots-max", func(c *node.Config) { c.PeerRootsMax = -1 }, "config: --peer-roots-max -1: may not be negative"},
		{"stranger-rate negative", func(c *node.Config) { c.StrangerRate = -0.5 },
			"config: --stranger-rate -0.5: may not be negative (0: strangers make the node ask its peers nothing)"},
		{"stranger-rate NaN", func(c *node.Config) { c.StrangerRate = math.NaN() },
			"config: --stranger-rate NaN: want a number of lookups and searches per second (0: none)"},
		{"stranger-rate infinite", func(c *node.Config) { c.StrangerRate = math.Inf(1) },
			"config: --stranger-rate +Inf: want a number of lookups and searches per second (0: none)"},
		{"stranger-burst", func(c *node.Config) { c.StrangerRate, c.StrangerBurst = 2, -1 },
			"config: --stranger-burst -1: may not be negative (0: the default, 10)"},
	}
	field := regexp.MustCompile(`\b(Libraries|DataDir|RedisURL|APIAddr|Workers|Settle|Listen|Bootstrap|Announce|AllowPeers|DHTMode|ConnLow|ConnHigh|ReprovideInterval|LookupTimeout|PeerRootsMax|StrangerRate|StrangerBurst)\b`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := node.Config{Libraries: []string{lib}, DataDir: data}
			tt.set(&c)
			c.SetDefaults()
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate = nil, want %q", tt.want)
			}
			got := err.Error()
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("Validate = %q, want it to start %q", got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("Validate = %q, want %q", got, tt.want)
			}
			if f := field.FindString(got); f != "" {
				t.Errorf("Validate = %q names the field %s, not its flag", got, f)
			}
		})
	}
}

// TestConfig_ZeroMeansDefault: 0 workers (--workers 0) is valid and means
// one per CPU, which ingest picks; a zero reprovide interval
// (--reprovide-interval 0) is the default 22h, not "never"; a zero
// stranger burst is the default 10. A zero stranger rate stays 0: it
// means none.
func TestConfig_ZeroMeansDefault(t *testing.T) {
	t.Parallel()
	c := node.Config{Libraries: []string{t.TempDir()}, DataDir: t.TempDir()}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	if c.Workers != 0 || c.ReprovideInterval != 22*time.Hour {
		t.Errorf("after SetDefaults: Workers %d, ReprovideInterval %s; want 0 (one per CPU, ingest's default) and 22h", c.Workers, c.ReprovideInterval)
	}
	if c.MetaCache != 10_000 {
		t.Errorf("after SetDefaults: MetaCache %d, want 10000", c.MetaCache)
	}
	if c.StrangerRate != 0 || c.StrangerBurst != 10 {
		t.Errorf("after SetDefaults: StrangerRate %g, StrangerBurst %d; want 0 (none) and 10", c.StrangerRate, c.StrangerBurst)
	}
}

// TestConfig_AnnounceCircuits: with --relay, announcing the relay's
// circuit addresses only is accepted (they are what peers dial).
func TestConfig_AnnounceCircuits(t *testing.T) {
	t.Parallel()
	const id = "12D3KooWBMpvJr2o9bmFxYoAnKpqgajzfqcinCRrH9vVktjt7TBn"
	c := node.Config{Libraries: []string{t.TempDir()}, DataDir: t.TempDir(),
		P2P: p2p.Config{Relays: []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id}, Announce: []string{"/ip4/10.0.0.1/tcp/4681/p2p/" + id + "/p2p-circuit"}}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
}
