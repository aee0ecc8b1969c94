package node

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/ingest"
)

// nodeMetrics are the node's Prometheus series, on a registry of its own (so
// several nodes in one process, as in the testnet, do not collide). Ingest,
// provide and peer figures are read at scrape time from what the
// ingester, the announcer and the host already count; lookups are counted
// as the API answers them.
type nodeMetrics struct {
	reg *prometheus.Registry
	// p2p holds libp2p's own metrics the node serves (the relay
	// service's libp2p_relaysvc_*).
	p2p *prometheus.Registry

	lookups       *prometheus.CounterVec
	lookupLatency *prometheus.HistogramVec
	// foundLocal and localLatency are the series of a local file found,
	// looked up once.
	foundLocal   prometheus.Counter
	localLatency prometheus.Observer
}

// scanStates are the values of metamesh_scan_state's state label.
var scanStates = []string{ingest.StateStarting, ingest.StateScanning, ingest.StateHashing,
	ingest.StateWatching, ingest.StatePolling, ingest.StateIdle, ingest.StateStopped}

// newHashDuration is the histogram of full hash passes, by their time.
func newHashDuration() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "metamesh_hash_duration_seconds",
		Help:    "Time of one file's full hash pass (sha2-256 and UnixFS in one read).",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})
}

func newMetrics(n *Node) *nodeMetrics {
	m := &nodeMetrics{
		reg: prometheus.NewRegistry(),
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metamesh_lookups_total",
			Help: "GET /api/meta lookups by source (local, peer: stored from peers or fetched from them, none) and result (found, not_found, error).",
		}, []string{"source", "result"}),
		lookupLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metamesh_lookup_duration_seconds",
			Help:    "GET /api/meta lookup time by source.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"source"}),
	}
	m.foundLocal = m.lookups.WithLabelValues("local", "found")
	m.localLatency = m.lookupLatency.WithLabelValues("local")
	prog := func() ingest.Progress { return n.ing.Progress() }
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.lookups, m.lookupLatency, n.hashDuration,
	)
	m.reg.MustRegister(shareMetrics(n)...)
	m.reg.MustRegister(scanMetrics(prog)...)
	m.reg.MustRegister(provideMetrics(n)...)
	m.reg.MustRegister(
		gauge("metamesh_hash_queue", "Files waiting for a hashing worker.",
			func() float64 { return float64(n.ing.QueueLen()) }),
		gauge("metamesh_meta_cache_documents", "Documents the /api/meta cache holds (--meta-cache).",
			func() float64 { return float64(n.st.CacheStats().Entries) }),
		counter("metamesh_meta_cache_hits_total", "Document reads the cache answered.",
			func() float64 { return float64(n.st.CacheStats().Hits) }),
		counter("metamesh_meta_cache_misses_total", "Document reads the cache did not answer (Redis did).",
			func() float64 { return float64(n.st.CacheStats().Misses) }),
		gauge("metamesh_peers", "Connected peers.",
			func() float64 { return float64(len(n.p2p.Host().Network().Peers())) }),
		gauge("metamesh_data_free_bytes", "Bytes still available on the data directory's file system.",
			func() float64 { return float64(n.space.state().FreeBytes) }),
		gauge("metamesh_data_full", "1 while the data directory has less than 64 MiB free (the node serves what it has, takes in no new file and is not ready), else 0.",
			func() float64 {
				if n.space.state().Full {
					return 1
				}
				return 0
			}),
	)
	n.p2p.RegisterMetrics(m.reg)
	m.p2p = n.p2p.Registry()
	for _, s := range scanStates {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "metamesh_scan_state", Help: "1 for the ingester's current state, 0 for the others.",
			ConstLabels: prometheus.Labels{"state": s},
		}, func() float64 {
			if prog().State == s {
				return 1
			}
			return 0
		}))
	}
	for _, lib := range n.cfg.Libraries {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "metamesh_library_available",
			Help:        "1 while the library is available, 0 while it is unavailable (gone, unmounted or not answering: nothing of it is deleted, its files' bytes are not served).",
			ConstLabels: prometheus.Labels{"library": lib},
		}, func() float64 {
			if n.ing.Unavailable(lib) != nil {
				return 0
			}
			return 1
		}))
	}
	return m
}

// handler serves the registry in the Prometheus exposition format.
func (m *nodeMetrics) handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, m.p2p}, promhttp.HandlerOpts{Registry: m.reg})
}

// lookup counts one GET /api/meta answer.
// localFound counts a lookup answered from a local file.
func (m *nodeMetrics) localFound(took time.Duration) {
	m.foundLocal.Inc()
	m.localLatency.Observe(took.Seconds())
}

func (m *nodeMetrics) lookup(doc api.Document, err error, took time.Duration) {
	source, result := "none", "found"
	switch {
	case err == nil && doc.Source == "local":
		m.localFound(took)
		return
	case err == nil:
		source = "peer"
	case status404(err):
		result = "not_found"
	case errors.Is(err, context.Canceled):
		result = "canceled" // the client went away: nothing failed here
	default:
		result = "error"
	}
	m.lookups.WithLabelValues(source, result).Inc()
	m.lookupLatency.WithLabelValues(source).Observe(took.Seconds())
}

// shareMetrics are the sharing's collectors: blocks served and fetched over
// bitswap, and the peers' records the bytes disproved.
func shareMetrics(n *Node) []prometheus.Collector {
	return []prometheus.Collector{
		counter("metamesh_share_served_bytes_total", "Bytes of the library files' blocks sent to peers over bitswap (--share-files).",
			func() float64 { return float64(n.shr.Stats().ServedBytes) }),
		counter("metamesh_share_served_blocks_total", "Blocks of the library files sent to peers over bitswap.",
			func() float64 { return float64(n.shr.Stats().ServedBlocks) }),
		counter("metamesh_peer_records_disproved_total", "Peers' records whose pairing of the asked CID with an IPFS CID the fetched bytes disproved: each dropped, its signers not believed for a day (log line names them).",
			func() float64 { return float64(n.pairs.disproved.Load()) }),
		counter("metamesh_share_fetched_bytes_total", "Bytes of peers' files' blocks received over bitswap for this node's fetches (GET /api/file of a peer's file).",
			func() float64 { return float64(n.shr.Stats().FetchedBytes) }),
	}
}

// scanMetrics are the current (or last) scan's collectors, read from prog.
func scanMetrics(prog func() ingest.Progress) []prometheus.Collector {
	return []prometheus.Collector{
		gauge("metamesh_scan_files_done", "Files the current (or last) full scan finished, whatever the result.",
			func() float64 { return float64(prog().FilesDone) }),
		gauge("metamesh_scan_files_total", "Files the current (or last) full scan found.",
			func() float64 { return float64(prog().FilesTotal) }),
		gauge("metamesh_scan_files_hashed", "Full hash passes (sha2-256 and UnixFS) since the current scan started.",
			func() float64 { return float64(prog().Hashed) }),
		gauge("metamesh_scan_files_failed", "Files the current scan could not ingest.",
			func() float64 { return float64(prog().Errors) }),
		gauge("metamesh_scan_bytes_done", "Bytes of the files the current scan finished (unchanged files included).",
			func() float64 { return float64(prog().BytesDone) }),
		gauge("metamesh_scan_bytes_hashed", "Bytes read by full hash passes since the current scan started.",
			func() float64 { return float64(prog().BytesHashed) }),
		gauge("metamesh_scan_bytes_total", "Bytes the current scan has to hash.",
			func() float64 { return float64(prog().BytesTotal) }),
		gauge("metamesh_scan_hash_bytes_per_second", "Hashing rate of the current (or last) scan: bytes hashed per second.",
			func() float64 { return prog().HashRate }),
		gauge("metamesh_scan_duration_seconds", "How long the current scan has run, or the last one took.",
			func() float64 {
				p := prog()
				if p.StartedAt.IsZero() {
					return 0
				}
				end := p.FinishedAt
				if end.IsZero() {
					end = time.Now()
				}
				return end.Sub(p.StartedAt).Seconds()
			}),
	}
}

// provideMetrics are the sweeping provider's collectors and its findability
// checks'.
func provideMetrics(n *Node) []prometheus.Collector {
	return []prometheus.Collector{
		counter("metamesh_provides_done_total", "Keys provided to the DHT (first provides and reprovides).",
			func() float64 { return float64(n.hh.ProvideStats().Provided) }),
		counter("metamesh_provides_failed_total", "Keys whose provide failed.",
			func() float64 { return float64(n.hh.ProvideStats().Failed) }),
		gauge("metamesh_provides_queued", "Keys waiting for their first provide.",
			func() float64 { return float64(n.hh.ProvideStats().Queued) }),
		gauge("metamesh_provides_announced", "Local files with a CID to announce.",
			func() float64 { return float64(n.hh.ProvideStats().Announced) }),
		counter("metamesh_provide_walks_total", "DHT walks the sweeping provider ran.",
			func() float64 { return float64(n.hh.ProvideStats().Walks) }),
		counter("metamesh_provide_messages_total", "DHT messages the sweeping provider sent.",
			func() float64 { return float64(n.hh.ProvideStats().Messages) }),
		gauge("metamesh_provide_keys", "Keys in the provider's keystore: file CIDs and search token keys.",
			func() float64 { return float64(n.hh.ProvideStats().Keys) }),
		gauge("metamesh_provide_token_keys", "Search token keys the announcer gave the keystore (one per keyed word of the local files).",
			func() float64 { return float64(n.hh.ProvideStats().TokenKeys) }),
		gauge("metamesh_provide_regions", "Keyspace regions the provider reprovides.",
			func() float64 { return float64(n.hh.ProvideStats().Regions) }),
		gauge("metamesh_provide_last_cycle_seconds", "How long the regions reprovided in the last cycle took in all.",
			func() float64 { return n.hh.ProvideStats().LastCycle.Seconds() }),
		gauge("metamesh_provide_oldest_region_provided_timestamp_seconds", "When the keyspace region provided longest ago was last provided (Unix time); 0 while a region was not provided since the start, or there is none.",
			func() float64 {
				if at, ok := n.hh.ProvideStats().OldestRegionProvided(); ok && !at.IsZero() {
					return float64(at.UnixNano()) / 1e9
				}
				return 0
			}),
		gauge("metamesh_provide_findable_closest", "Peers closest to the key of each region's latest findability check, summed.",
			func() float64 { return float64(n.hh.ProvideStats().Findable.Closest) }),
		gauge("metamesh_provide_findable_holding", "Of them, the peers that returned this household among the key's providers.",
			func() float64 { return float64(n.hh.ProvideStats().Findable.Holding) }),
		gauge("metamesh_provide_findable_checked_timestamp_seconds", "When the last findability check ran (Unix time); 0 before the first.",
			func() float64 {
				if at := n.hh.ProvideStats().Findable.CheckedAt; !at.IsZero() {
					return float64(at.UnixNano()) / 1e9
				}
				return 0
			}),
		counter("metamesh_provide_checks_total", "Findability checks run.",
			func() float64 { return float64(n.hh.ProvideStats().Findable.Checks) }),
		counter("metamesh_provide_check_messages_total", "DHT messages the findability checks sent (GET_PROVIDERS; not in metamesh_provide_messages_total).",
			func() float64 { return float64(n.hh.ProvideStats().Findable.CheckMessages) }),
	}
}

// gauge and counter are collectors of what f reads when scraped.
func gauge(name, help string, f func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
}

func counter(name, help string, f func() float64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
}
