package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
	"github.com/metamesh/node/store/storetest"
)

// BenchmarkMetaThroughput loads 100,000 roots into a running node's store,
// then drives GET /api/meta/<cid>?local=1 with 32 concurrent keep-alive
// clients on random known CIDs for a few seconds, and runs
// redis-benchmark -t get on the same Redis with 32 clients: the node's
// rate as a ratio of Redis's GET rate, and the request latencies.
func BenchmarkMetaThroughput(b *testing.B) {
	const roots, clients, run = 100_000, 32, 5 * time.Second
	// The document cache holds every root (--meta-cache 100000, some
	// 420 MB): the benchmark reads all of them at random.
	n, srv, lib := benchNode(b, func(c *node.Config) { c.MetaCache = roots })
	ctx := context.Background()
	// The roots' paths are inside the library but never on disk: the
	// initial scan is over and no event will look at them.
	st := n.Store()
	cids := make([]string, 0, roots)
	start := time.Now()
	var batch []store.IngestItem
	for i := 0; i < roots; i++ {
		h := benchHashes(i)
		cids = append(cids, h.SHA256)
		batch = append(batch, store.IngestItem{
			File:   store.FileStat{Path: fmt.Sprintf("%s/d%03d/Some.Movie.%d.2010.1080p.mkv", lib, i%500, i), Size: int64(4096 + i), MtimeNs: 1},
			Hashes: h,
			Meta: store.Meta{Version: 1, Fields: map[string]string{"mimeType": "video/matroska", "fileType": "video",
				"titles/eng": "Some Movie " + strconv.Itoa(i), "movieYear": "2010", "videoType": "movie"}},
		})
		if len(batch) == 64 || i == roots-1 {
			if _, err := st.IngestBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	fmt.Printf("\nloaded %d roots in %s\n", roots, time.Since(start).Round(time.Millisecond))
	// The node's field tracker and search indexer follow the load's
	// keyspace notifications for a while: measure once they are done.
	waitQuiet(b, srv.Addr())

	// profile starts a CPU profile of the measured phase alone, where the
	// request path's time goes, when METAMESH_BENCH_CPUPROFILE names a file.
	profile := func() (stop func()) {
		if path := os.Getenv("METAMESH_BENCH_CPUPROFILE"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			pprof.StartCPUProfile(f)
			return func() { pprof.StopCPUProfile(); f.Close() }
		}
		return func() {}
	}
	defer func() {
		st := n.Store().CacheStats()
		fmt.Printf("  document cache: %d documents, %d hits, %d misses\n\n", st.Entries, st.Hits, st.Misses)
	}()
	if wrk, err := exec.LookPath("wrk"); err == nil {
		warmMeta(b, "http://"+n.APIAddr()+"/api/meta/", cids, clients)
		heapProfile(b)
		stop := profile()
		rate, p50, p99 := runWrk(b, wrk, "http://"+n.APIAddr(), cids, clients, run)
		stop()
		floor := bareFloor(b, wrk, metaBody(b, "http://"+n.APIAddr()+"/api/meta/"+cids[0]), cids, clients, run)
		reportMeta(b, srv, "wrk", roots, clients, run, rate, p50, p99, floor)
		return
	}
	url := "http://" + n.APIAddr() + "/api/meta/"
	warmMeta(b, url, cids, clients)
	heapProfile(b)
	defer profile()()
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	client := &http.Client{Transport: tr}
	var done atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	stop := time.Now().Add(run)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			i := c * 7919
			for time.Now().Before(stop) {
				i = (i*1103515245 + 12345) & 0x7fffffff
				t0 := time.Now()
				resp, err := client.Get(url + cids[i%roots] + "?local=1")
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
				done.Add(1)
			}
		}(c)
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	rate := float64(done.Load()) / run.Seconds()
	p50, p99 := all[len(all)/2], all[len(all)*99/100]

	reportMeta(b, srv, "an in-process Go client", roots, clients, run, rate, ms(p50), ms(p99), 0)
}

// heapProfile writes a heap profile of the warm node, what the document
// cache holds, when METAMESH_BENCH_HEAPPROFILE names a file.
func heapProfile(b *testing.B) {
	path := os.Getenv("METAMESH_BENCH_HEAPPROFILE")
	if path == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// metaBody is the body GET url answers.
func metaBody(b *testing.B, url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

// warmMeta reads every CID once, as a household's reads over time would,
// so the document cache holds them.
func warmMeta(b *testing.B, url string, cids []string, clients int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	defer func() {
		runtime.GC()
		runtime.ReadMemStats(&after)
		fmt.Printf("the document cache holds %.1f KB of Go heap per document\n",
			float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(len(cids))/1024)
	}()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(cids)); i = next.Add(1) - 1 {
				resp, err := client.Get(url + cids[i] + "?local=1")
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("read every CID once in %s\n", time.Since(start).Round(time.Millisecond))
}

// reportMeta runs redis-benchmark's GET on the node's Redis, over its
// unix socket and over loopback TCP (the API's transport), and prints the
// node's rate next to both; floor, when measured, is the rate of a bare
// net/http server answering a fixed body of the same size.
func reportMeta(b *testing.B, srv *store.Server, gen string, roots, clients int, run time.Duration, rate, p50, p99, floor float64) {
	socket := redisGet(b, clients, "-s", srv.Addr())
	tcp := redisGet(b, clients, "-p", strconv.Itoa(redisTCP(b, srv)))
	fmt.Printf("GET /api/meta/<cid>?local=1, %d roots, %d connections from %s, %s:\n", roots, clients, gen, run)
	fmt.Printf("  node   %8.0f req/s   p50 %6.2f ms   p99 %6.2f ms\n", rate, p50, p99)
	fmt.Printf("  redis-benchmark -t get, same Redis, %d clients, loopback TCP: %8.0f req/s\n", clients, tcp)
	fmt.Printf("  redis-benchmark -t get, same Redis, %d clients, unix socket:  %8.0f req/s\n", clients, socket)
	if floor > 0 {
		fmt.Printf("  bare net/http, a fixed answer of the same size, same client:  %8.0f req/s\n", floor)
	}
	fmt.Printf("  node / Redis GET over TCP: %.2f (goal >= 0.5)\n", rate/tcp)
	fmt.Printf("  node / Redis GET over its unix socket: %.2f\n", rate/socket)
	if floor > 0 {
		fmt.Printf("  node / bare net/http: %.2f\n", rate/floor)
	}
	fmt.Println()
	b.ReportMetric(rate/tcp, "meta/redis-get")
	b.ReportMetric(rate/socket, "meta/redis-get-unix")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
}

// redisGet is redis-benchmark -t get's rate with clients connections to
// the Redis that args name.
func redisGet(b *testing.B, clients int, args ...string) float64 {
	args = append(args, "-t", "get", "-n", "300000", "-c", strconv.Itoa(clients), "-q")
	out, err := exec.Command("redis-benchmark", args...).CombinedOutput()
	if err != nil {
		b.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	mm := regexp.MustCompile(`GET: ([0-9.]+) requests per second`).FindSubmatch(out)
	if mm == nil {
		b.Fatalf("redis-benchmark said %q", out)
	}
	rate, _ := strconv.ParseFloat(string(mm[1]), 64)
	return rate
}

// redisTCP opens a loopback TCP listener on the managed Redis (which has
// none) for the measurement and returns its port; it closes with the
// benchmark.
func redisTCP(b *testing.B, srv *store.Server) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	set := func(k, v string) {
		if out, err := exec.Command("redis-cli", "-s", srv.Addr(), "config", "set", k, v).CombinedOutput(); err != nil || !strings.Contains(string(out), "OK") {
			b.Fatalf("redis-cli config set %s %s: %v %s", k, v, err, out)
		}
	}
	set("bind", "127.0.0.1")
	set("port", strconv.Itoa(port))
	b.Cleanup(func() { set("port", "0") })
	return port
}

// bareFloor is wrk's rate, as runWrk drives it, against a bare net/http
// server answering every request with body and the API's two headers:
// what net/http and loopback TCP cost on this machine, with nothing of
// the node's.
func bareFloor(b *testing.B, wrk string, body []byte, cids []string, clients int, run time.Duration) float64 {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ct, nosniff := []string{"application/json"}, []string{"nosniff"}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"], h["X-Content-Type-Options"] = ct, nosniff
		w.Write(body)
	})}
	go hs.Serve(l)
	defer hs.Close()
	rate, _, _ := runWrk(b, wrk, "http://"+l.Addr().String(), cids, clients, run)
	return rate
}

// runWrk drives the node with wrk (another process, as redis-benchmark
// is) on random known CIDs and returns its rate and p50/p99 in ms.
func runWrk(b *testing.B, wrk, base string, cids []string, clients int, run time.Duration) (float64, float64, float64) {
	dir := b.TempDir()
	list := filepath.Join(dir, "cids")
	if err := os.WriteFile(list, []byte(strings.Join(cids, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(dir, "meta.lua")
	// The requests are formatted once: wrk's Lua then costs the node's
	// two cores as little as redis-benchmark's C does Redis's.
	lua := `local reqs = {}
function init(args)
  for line in io.lines("` + list + `") do reqs[#reqs + 1] = wrk.format("GET", "/api/meta/" .. line .. "?local=1") end
  math.randomseed(os.time())
end
request = function()
  return reqs[math.random(#reqs)]
end
`
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(wrk, "-t1", "-c"+strconv.Itoa(clients), "-d"+strconv.Itoa(int(run.Seconds()))+"s", "--latency", "-s", script, base).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	num := func(re string) float64 {
		m := regexp.MustCompile(re).FindSubmatch(out)
		if m == nil {
			b.Fatalf("wrk said %q", out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		switch string(m[2]) {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		return v
	}
	rateM := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
	if rateM == nil || strings.Contains(string(out), "Non-2xx") {
		b.Fatalf("wrk said %q", out)
	}
	rate, _ := strconv.ParseFloat(string(rateM[1]), 64)
	return rate, num(`50%\s+([0-9.]+)(us|ms|s)`), num(`99%\s+([0-9.]+)(us|ms|s)`)
}

// benchNode starts a node on an empty library with a Redis of its own and
// waits for its first scan; it stops with the benchmark.
func benchNode(b *testing.B, opts ...func(*node.Config)) (*node.Node, *store.Server, string) {
	srv := storetest.Server(b)
	lib, _ := filepath.EvalSymlinks(b.TempDir())
	cfg := node.Config{
		Libraries: []string{lib}, RedisURL: srv.URL(), APIAddr: "127.0.0.1:0", DataDir: storetest.Dir(b),
		P2P: p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}, Logger: storetest.Logger(b),
	}
	for _, o := range opts {
		o(&cfg)
	}
	n, err := node.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	if err := n.Ingester().WaitIdle(waiting.Context(b)); err != nil {
		b.Fatal(err)
	}
	return n, srv, lib
}

// waitQuiet waits until the Redis at socket serves fewer than 50
// commands in half a second: the node's background work on what was just
// loaded is over.
func waitQuiet(b *testing.B, socket string) {
	processed := func() int64 {
		out, err := exec.Command("redis-cli", "-s", socket, "INFO", "stats").CombinedOutput()
		if err != nil {
			b.Fatalf("redis-cli: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`total_commands_processed:(\d+)`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("INFO stats said %q", out)
		}
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return n
	}
	last := int64(-1) // no count yet: the first look only takes one
	took := waiting.Until(b, "Redis to quieten", func() string {
		n := processed()
		busy := n - last
		first := last < 0
		last = n
		switch {
		case first:
			return "a first count taken"
		case busy < 50:
			return ""
		}
		return fmt.Sprintf("%d commands in the last half second", busy)
	}, waiting.Limit(10*time.Minute), waiting.Every(500*time.Millisecond))
	fmt.Printf("background work on the loaded roots done after %s\n", took.Round(100*time.Millisecond))
}

// benchHashes makes the i-th distinct set of hashes of a loaded root (its
// IPFS CID is its sha2-256 CID, as for a small file).
func benchHashes(i int) store.Hashes {
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], uint64(i))
	d1 := sha256.Sum256(append([]byte("m"), seed[:]...))
	d2 := sha256.Sum256(append([]byte("s"), seed[:]...))
	m, _ := protocol.MidhashCID(d1[:])
	s, _ := protocol.SHA256CID(d2[:])
	return store.Hashes{Midhash: m.String(), SHA256: s.String(), IPFS: s.String()}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
