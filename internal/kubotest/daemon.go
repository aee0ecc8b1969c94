package kubotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/pnet"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Options configure a daemon.
type Options struct {
	// SwarmKey, when set, makes the daemon's network private: it is the
	// swarm.key file's bytes, in the standard format
	// "/key/swarm/psk/1.0.0/\n/base16/\n<64 hex digits>\n" (NewSwarmKey),
	// the same bytes the node reads from the file --swarm-key names. Start
	// writes them as IPFS_PATH/swarm.key and sets LIBP2P_FORCE_PNET=1, so
	// the daemon refuses to run without them.
	SwarmKey []byte
}

// NewSwarmKey returns a random private network key in the swarm.key
// format that both Kubo and the node (--swarm-key) read.
func NewSwarmKey() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return []byte("/key/swarm/psk/1.0.0/\n/base16/\n" + hex.EncodeToString(k) + "\n")
}

// startTimeout guards the daemon's start (init, config, the API
// answering): it takes a second or two; the guard is for hangs on a
// loaded machine.
const startTimeout = 2 * time.Minute

// Daemon is one running `ipfs daemon` on loopback, in its own IPFS_PATH
// under the test's temporary directory, stopped by the test's cleanup.
// Its methods are safe for concurrent use.
type Daemon struct {
	bin, repo string
	api       string // http://127.0.0.1:port, the RPC API
	id        string
	addrs     []string
	cmd       *exec.Cmd
	exited    chan struct{}
	out       *lockedBuffer
	client    *http.Client
	stopOnce  sync.Once
}

// Start runs `ipfs init` in a new IPFS_PATH, writes the loopback-only
// configuration (config.go says what and why) and the swarm key when
// given, and starts `ipfs daemon`, returning once its RPC API answers.
// It skips the test when there is no Kubo 0.42 (Binary). The daemon is
// stopped (SIGINT, then SIGKILL after 15 s) by tb.Cleanup, and its output
// is printed with tb.Logf when the test failed; it dies with the test
// process even when that is killed.
func Start(tb testing.TB, opts Options) *Daemon {
	tb.Helper()
	bin := Binary(tb)
	repo := tb.TempDir()
	d := &Daemon{bin: bin, repo: repo, exited: make(chan struct{}), out: &lockedBuffer{},
		client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 8}}}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	env := environ(repo)
	ini := exec.CommandContext(ctx, bin, "init", "--profile=test", "--empty-repo")
	ini.Env = env
	if out, err := ini.CombinedOutput(); err != nil {
		tb.Fatalf("kubotest: ipfs init: %v\n%s", err, out)
	}
	if err := writeLoopbackConfig(repo); err != nil {
		tb.Fatalf("kubotest: config: %v", err)
	}
	if opts.SwarmKey != nil {
		if _, err := pnet.DecodeV1PSK(bytes.NewReader(opts.SwarmKey)); err != nil {
			tb.Fatalf("kubotest: Options.SwarmKey is not a swarm.key (/key/swarm/psk/1.0.0/): %v", err)
		}
		if err := os.WriteFile(filepath.Join(repo, "swarm.key"), opts.SwarmKey, 0o600); err != nil {
			tb.Fatal(err)
		}
		env = append(env, "LIBP2P_FORCE_PNET=1")
	}

	d.cmd = exec.Command(bin, "daemon")
	d.cmd.Env = env
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	// Its own process group, so a Ctrl-C meant for go test does not stop
	// it before the cleanup does; and killed when the test process dies.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		tb.Fatalf("kubotest: ipfs daemon: %v", err)
	}
	go func() {
		_ = d.cmd.Wait()
		close(d.exited)
	}()
	// Cleanups run last-registered first: stop, then the output of the
	// stopped daemon when the test failed.
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("kubotest: daemon %s (IPFS_PATH %s) output:\n%s", d.id, d.repo, d.out.String())
		}
	})
	tb.Cleanup(d.stop)

	if err := d.waitReady(ctx); err != nil {
		tb.Fatalf("kubotest: ipfs daemon did not start: %v", err)
	}
	return d
}

// waitReady polls until the API's address is in IPFS_PATH/api and
// /api/v0/id answers, then keeps the ID and swarm addresses.
func (d *Daemon) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-d.exited:
			return fmt.Errorf("it exited (%v)", d.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %v", ctx.Err(), last)
		case <-tick.C:
		}
		if d.api == "" {
			b, err := os.ReadFile(filepath.Join(d.repo, "api"))
			if err != nil {
				last = err
				continue
			}
			m, err := ma.NewMultiaddr(strings.TrimSpace(string(b)))
			if err != nil {
				return fmt.Errorf("IPFS_PATH/api: %w", err)
			}
			_, host, err := manet.DialArgs(m)
			if err != nil {
				return fmt.Errorf("IPFS_PATH/api: %w", err)
			}
			d.api = "http://" + host
		}
		var id struct {
			ID        string
			Addresses []string
		}
		if err := d.rpcJSON(ctx, "id", nil, &id); err != nil {
			last = err
			continue
		}
		d.id = id.ID
		for _, a := range id.Addresses {
			if loopbackTCP(a) {
				d.addrs = append(d.addrs, a)
			}
		}
		if len(d.addrs) == 0 {
			return fmt.Errorf("no loopback TCP swarm address in %v", id.Addresses)
		}
		return nil
	}
}

// stop asks the daemon to stop (SIGINT, as Ctrl-C does) and kills it
// when it has not after 15 s.
func (d *Daemon) stop() {
	d.stopOnce.Do(func() {
		_ = d.cmd.Process.Signal(os.Interrupt)
		select {
		case <-d.exited:
		case <-time.After(15 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
		d.client.CloseIdleConnections()
	})
}

// ID is the daemon's peer ID.
func (d *Daemon) ID() string { return d.id }

// Addrs are the daemon's swarm addresses, loopback TCP with /p2p/<id>.
func (d *Daemon) Addrs() []string { return append([]string(nil), d.addrs...) }

// API is the base URL of the daemon's RPC API (http://127.0.0.1:port),
// for what the methods here do not cover (POST /api/v0/<command>).
func (d *Daemon) API() string { return d.api }

// Repo is the daemon's IPFS_PATH.
func (d *Daemon) Repo() string { return d.repo }

// Output is what the daemon has printed so far (stdout and stderr).
func (d *Daemon) Output() string { return d.out.String() }

// Connect connects the daemon to the peer at maddr (with /p2p/<id>), as
// `ipfs swarm connect` does, failing the test when it cannot.
func (d *Daemon) Connect(tb testing.TB, maddr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.rpcJSON(ctx, "swarm/connect", url.Values{"arg": {maddr}}, nil); err != nil {
		tb.Fatalf("kubotest: %s: swarm connect %s: %v", d.id, maddr, err)
	}
}

// Peers are the addresses of the peers the daemon is connected to, as
// `ipfs swarm peers` lists them (/ip4/…/tcp/…/p2p/<id>).
func (d *Daemon) Peers(ctx context.Context) ([]string, error) {
	var r struct{ Peers []struct{ Addr, Peer string } }
	if err := d.rpcJSON(ctx, "swarm/peers", nil, &r); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range r.Peers {
		out = append(out, p.Addr+"/p2p/"+p.Peer)
	}
	return out, nil
}

// Add adds the file at path and returns its CID: what `ipfs add
// --cid-version=1 -Q --pin=false path` prints, with Kubo's defaults (256
// KiB chunks, raw leaves, balanced layout). It sends what that command
// sends to the RPC API. Unpinned, the blocks stay until a `repo gc`.
func (d *Daemon) Add(tb testing.TB, path string) string {
	tb.Helper()
	c, err := d.add(context.Background(), path)
	if err != nil {
		tb.Fatalf("kubotest: %s: add %s: %v", d.id, path, err)
	}
	return c
}

func (d *Daemon) add(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", url.PathEscape(filepath.Base(path)))
		if err == nil {
			_, err = io.Copy(part, f)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	q := url.Values{"cid-version": {"1"}, "quieter": {"true"}, "pin": {"false"}, "progress": {"false"}}
	resp, err := d.rpc(ctx, "add", q, pr, mw.FormDataContentType())
	if err != nil {
		pr.CloseWithError(err)
		return "", err
	}
	defer resp.Body.Close()
	var root string
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct{ Hash string }
		if err := dec.Decode(&ev); err == io.EOF {
			break
		} else if err != nil {
			return "", err
		}
		if ev.Hash != "" {
			root = ev.Hash
		}
	}
	if err := streamError(resp); err != nil {
		return "", err
	}
	if root == "" {
		return "", errors.New("no CID in the answer")
	}
	return root, nil
}

// Cat writes the bytes of the file cid names to w, as `ipfs cat` does,
// fetching the blocks it lacks over bitswap from the peers it is
// connected to.
func (d *Daemon) Cat(ctx context.Context, cid string, w io.Writer) error {
	resp, err := d.rpc(ctx, "cat", url.Values{"arg": {cid}, "progress": {"false"}}, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("cat %s: %w", cid, err)
	}
	if err := streamError(resp); err != nil {
		return fmt.Errorf("cat %s: %w", cid, err)
	}
	return nil
}

// Transfer is one timed Cat.
type Transfer struct {
	Bytes int64
	// TTFB is the time from the request to the first byte of the file;
	// Total to its last.
	TTFB, Total time.Duration
}

// BytesPerSec is the transfer's throughput over its whole time.
func (t Transfer) BytesPerSec() float64 { return float64(t.Bytes) / t.Total.Seconds() }

// TimedCat cats cid into nothing and times it.
func (d *Daemon) TimedCat(ctx context.Context, cid string) (Transfer, error) {
	w := &firstByte{}
	start := time.Now()
	w.start = start
	err := d.Cat(ctx, cid, w)
	t := Transfer{Bytes: w.n, TTFB: w.ttfb, Total: time.Since(start)}
	return t, err
}

type firstByte struct {
	start time.Time
	n     int64
	ttfb  time.Duration
}

func (w *firstByte) Write(p []byte) (int, error) {
	if w.n == 0 && len(p) > 0 {
		w.ttfb = time.Since(w.start)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// GC runs `ipfs repo gc`: every unpinned block goes, so a daemon that
// fetched a file fetches it again on the next Cat (and one that Added it
// loses it).
func (d *Daemon) GC(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := d.rpc(ctx, "repo/gc", url.Values{"quiet": {"true"}}, nil, "")
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil {
			err = streamError(resp)
		}
	}
	if err != nil {
		tb.Fatalf("kubotest: %s: repo gc: %v", d.id, err)
	}
}

// rpc POSTs /api/v0/<cmd>; an answer other than 200 is an error with
// Kubo's message.
func (d *Daemon) rpc(ctx context.Context, cmd string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	u := d.api + "/api/v0/" + cmd
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e struct{ Message string }
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			return nil, fmt.Errorf("%s: %s", cmd, e.Message)
		}
		return nil, fmt.Errorf("%s: %s: %s", cmd, resp.Status, bytes.TrimSpace(b))
	}
	return resp, nil
}

// rpcJSON runs a command whose answer is one JSON object and decodes it
// into v (when not nil).
func (d *Daemon) rpcJSON(ctx context.Context, cmd string, q url.Values, v any) error {
	resp, err := d.rpc(ctx, cmd, q, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := streamError(resp); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

// streamError is the error Kubo reports in the X-Stream-Error trailer
// when a streamed answer broke off; read after the body.
func streamError(resp *http.Response) error {
	if e := resp.Trailer.Get("X-Stream-Error"); e != "" {
		return errors.New(e)
	}
	return nil
}

// loopbackTCP says whether a is /ip4/127.x.x.x/tcp/<port>/p2p/<id>.
func loopbackTCP(a string) bool {
	m, err := ma.NewMultiaddr(a)
	if err != nil {
		return false
	}
	ip, err := m.ValueForProtocol(ma.P_IP4)
	if err != nil || !strings.HasPrefix(ip, "127.") {
		return false
	}
	if _, err := m.ValueForProtocol(ma.P_TCP); err != nil {
		return false
	}
	_, err = m.ValueForProtocol(ma.P_P2P)
	return err == nil
}

// lockedBuffer keeps a process's output; written by the exec package's
// copying goroutines, read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
