package kubotest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This machine flags any traffic that leaves 127.0.0.0/8, so a test
// daemon must make none: not a packet, not a DNS query. `ipfs init
// --profile=test` starts from Kubo's own test profile (loopback
// listeners on port 0, no bootstrap peers, no MDNS, no NAT port mapping,
// no AutoTLS, no AutoConf and the fields it would fill emptied), and
// loopbackConfig sets, on top of it, everything that could still reach
// out, each for the reason given (Kubo 0.42's docs/config.md and
// docs/environment-variables.md):
//
//   - Addresses.Swarm ["/ip4/127.0.0.1/tcp/0"]: TCP on loopback only, a
//     free port the kernel picks; no QUIC, WebTransport, WebRTC or IPv6
//     listener (the defaults listen on 0.0.0.0 and :: on UDP and TCP).
//   - Addresses.API, Addresses.Gateway ["/ip4/127.0.0.1/tcp/0"]: the RPC
//     API and the gateway on loopback, free ports; the daemon writes the
//     API's address to IPFS_PATH/api, which Start reads.
//   - Addresses.Announce, AppendAnnounce, NoAnnounce []: the node tells
//     its loopback listener, nothing more.
//   - Bootstrap [], Peering.Peers []: no peer is dialled at start; a test
//     connects daemons itself (Connect).
//   - AutoConf.Enabled false: from 0.37 Kubo fetches
//     https://conf.ipfs-mainnet.org/autoconf.json at start and daily to
//     fill the "auto" placeholders; off, and none of those placeholders
//     left (an "auto" with AutoConf off fails the daemon's start).
//   - Routing.Type "none", Routing.DelegatedRouters [],
//     Ipns.DelegatedPublishers []: no Amino DHT (client or server), no
//     HTTP router, no IPNS publisher: nothing is looked up or announced.
//     Fetching relies on bitswap asking the peers the daemon is connected
//     to, which is what a test sets up.
//   - Provide.Enabled false: no provide or reprovide queue (with no
//     routing there is nowhere to provide to; this keeps it from trying).
//   - HTTPRetrieval.Enabled false: no HTTPS block requests to providers
//     (they would come from delegated routers, of which there are none).
//   - Discovery.MDNS.Enabled false: no multicast DNS-SD on the LAN
//     (224.0.0.251 leaves loopback).
//   - AutoNAT.ServiceMode "disabled": the node does not dial back others
//     to tell them their reachability.
//   - AutoTLS.Enabled false: no registration with libp2p.direct and no
//     ACME (Let's Encrypt) request.
//   - Swarm.DisableNatPortMap true: no UPnP/NAT-PMP to the LAN's router.
//   - Swarm.RelayClient.Enabled false, Swarm.RelayService.Enabled false,
//     Swarm.EnableHolePunching false: no relay discovery or reservation,
//     no relaying for others, no DCUtR.
//   - Swarm.Transports.Network: TCP only (QUIC, WebTransport,
//     WebRTCDirect, Websocket and the relay transport off), so the node
//     neither listens nor dials on anything else.
//   - Swarm.AddrFilters: every IPv4 range but 127.0.0.0/8 and all of
//     IPv6. The connection gater refuses, before any packet, a dial to or
//     a connection from such an address, whatever a peer's identify or a
//     caller's Connect hands the node: the backstop under all the above.
//   - DNS.Resolvers {".": "https://127.0.0.1:1/dns-query"}: a /dns
//     multiaddr or a DNSLink would otherwise go to the system's resolver
//     (off this host); a DNS-over-HTTPS resolver on a closed loopback port
//     makes any such lookup fail here instead. Nothing a test does needs
//     DNS.
//   - Plugins.Plugins.telemetry: Disabled, and Config.Mode "off": the
//     telemetry plugin would send usage data over HTTPS (from 15 minutes
//     after the first start); the environment also sets IPFS_TELEMETRY=off
//     (environ), which the plugin reads first, for every ipfs command run
//     here, `ipfs init` included.
//
// Everything else keeps Kubo's defaults, the import ones in particular
// (CIDv1 with raw leaves, 256 KiB chunks, balanced layout), so the CIDs
// are those `ipfs add --cid-version=1` prints anywhere.
var loopbackConfig = map[string]any{
	"Addresses": map[string]any{
		"Swarm":          []string{"/ip4/127.0.0.1/tcp/0"},
		"API":            []string{"/ip4/127.0.0.1/tcp/0"},
		"Gateway":        []string{"/ip4/127.0.0.1/tcp/0"},
		"Announce":       []string{},
		"AppendAnnounce": []string{},
		"NoAnnounce":     []string{},
	},
	"Bootstrap": []string{},
	"Peering":   map[string]any{"Peers": []any{}},
	"AutoConf":  map[string]any{"Enabled": false},
	"Routing": map[string]any{
		"Type":             "none",
		"DelegatedRouters": []string{},
	},
	"Ipns":          map[string]any{"DelegatedPublishers": []string{}},
	"Provide":       map[string]any{"Enabled": false},
	"HTTPRetrieval": map[string]any{"Enabled": false},
	"Discovery":     map[string]any{"MDNS": map[string]any{"Enabled": false}},
	"AutoNAT":       map[string]any{"ServiceMode": "disabled"},
	"AutoTLS":       map[string]any{"Enabled": false},
	"Swarm": map[string]any{
		"DisableNatPortMap":  true,
		"RelayClient":        map[string]any{"Enabled": false},
		"RelayService":       map[string]any{"Enabled": false},
		"EnableHolePunching": false,
		"Transports": map[string]any{"Network": map[string]any{
			"TCP":          true,
			"QUIC":         false,
			"WebTransport": false,
			"WebRTCDirect": false,
			"Websocket":    false,
			"Relay":        false,
		}},
		"AddrFilters": nonLoopback,
	},
	"DNS": map[string]any{"Resolvers": map[string]string{".": "https://127.0.0.1:1/dns-query"}},
	"Plugins": map[string]any{"Plugins": map[string]any{
		"telemetry": map[string]any{"Disabled": true, "Config": map[string]any{"Mode": "off"}},
	}},
}

// nonLoopback is every address but 127.0.0.0/8: IPv4 in the eight
// blocks that leave out 127/8 exactly, and all of IPv6.
var nonLoopback = []string{
	"/ip4/0.0.0.0/ipcidr/2",   //   0–63
	"/ip4/64.0.0.0/ipcidr/3",  //  64–95
	"/ip4/96.0.0.0/ipcidr/4",  //  96–111
	"/ip4/112.0.0.0/ipcidr/5", // 112–119
	"/ip4/120.0.0.0/ipcidr/6", // 120–123
	"/ip4/124.0.0.0/ipcidr/7", // 124–125
	"/ip4/126.0.0.0/ipcidr/8", // 126
	"/ip4/128.0.0.0/ipcidr/1", // 128–255
	"/ip6/::/ipcidr/0",        // all of IPv6
}

// writeLoopbackConfig merges loopbackConfig into IPFS_PATH/config, which
// `ipfs init` wrote: objects key by key, anything else replaced.
func writeLoopbackConfig(repo string) error {
	p := filepath.Join(repo, "config")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	merge(cfg, loopbackConfig)
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, out, 0o600)
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			dv, ok := dst[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
				dst[k] = dv
			}
			merge(dv, sv)
			continue
		}
		dst[k] = v
	}
}

// environ is the environment of every ipfs command run here: this
// process's, without anything that steers Kubo or libp2p (IPFS_*, such
// as IPFS_HTTP_ROUTERS, which would add HTTP routers; LIBP2P_*; GOLOG_*;
// OTEL_*, which could start a trace exporter; TEST_DHT_STUB) or sends
// HTTP through a proxy, plus IPFS_PATH, IPFS_TELEMETRY=off and plain
// (uncoloured) log lines.
func environ(repo string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		uk := strings.ToUpper(k)
		switch {
		case strings.HasPrefix(uk, "IPFS_"), strings.HasPrefix(uk, "LIBP2P_"), strings.HasPrefix(uk, "GOLOG_"),
			strings.HasPrefix(uk, "OTEL_"), uk == "TEST_DHT_STUB",
			uk == "HTTP_PROXY", uk == "HTTPS_PROXY", uk == "ALL_PROXY", uk == "NO_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "IPFS_PATH="+repo, "IPFS_TELEMETRY=off", "GOLOG_LOG_FMT=nocolor")
}
