package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/metamesh/node/api"
)

// Commands that talk to a node send the token of --api-token-file (or
// its environment twin) and say which file they could not read.
func TestClient_TokenFile(t *testing.T) {
	var mu sync.Mutex
	var auth string
	got := func() string { mu.Lock(); defer mu.Unlock(); return auth }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"peerId":"x"}`))
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "api-token")
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	if _, errOut, code := metamesh(t, nil, "status", "--api", srv.URL, "--api-token-file", tok); code != 0 || got() != "Bearer s3cret" {
		t.Fatalf("status with a token file: exit %d %s, Authorization %q", code, errOut, got())
	}
	mu.Lock()
	auth = ""
	mu.Unlock()
	if _, _, code := metamesh(t, []string{"METAMESH_API_TOKEN_FILE=" + tok}, "status", "--api", strings.TrimPrefix(srv.URL, "http://")); code != 0 || got() != "Bearer s3cret" {
		t.Fatalf("status with the env twin and host:port: exit %d, Authorization %q", code, got())
	}
	if _, errOut, code := metamesh(t, nil, "status", "--api", srv.URL, "--api-token-file", tok+".missing"); code == 0 || !strings.Contains(errOut, "--api-token-file") {
		t.Errorf("a missing token file: exit %d %q", code, errOut)
	}
}

// TestClient_Numbers: whole numbers of the node's JSON print as integers
// in every readable output, however the node wrote them (3000000 or 3e6)
// where the answer holds open-schema values (a document's metadata), and
// --json prints them as the node wrote them; a typed answer's integer
// fields take integers only.
func TestClient_Numbers(t *testing.T) {
	answers := map[string]string{
		"/api/meta/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku": `{"canonical_cid":"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku","source":"local",
			"cids":["bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku","bafybeimadeup"],"sizeByte":3e6,"mtime":1700000000,
			"learned":{"bafybeimadeup":["12D3KooWm1","12D3KooWm2"]},
			"fileinfo":{"duration":5.4e3,"streamdetails":{"video":[{"width":1.92e3,"height":1080,"bitrate":1.2e7}],"audio":[{"channels":6e0}]}}}`,
		"/api/status": `{"version":"dev","peerId":"12D3KooWx","roots":2000000,"peers":0,"provideQueue":1000000,
			"files":{"local":2000000,"fromPeers":0,"loaded":true},"libraryFiles":2000000,
			"scan":{"state":"watching","filesDone":2000000,"filesTotal":2000000,"errors":0},"redis":{"ok":true,"addr":"r.sock"}}`,
		// A status is typed (api.Status): an integer written 1e6 is not
		// one, and the command says which field.
		"/bad/api/status": `{"version":"dev","peerId":"12D3KooWx","provideQueue":1e6}`,
		"/api/search":     `{"hits":[{"title":"Big","year":2001,"season":1,"episode":2,"size":3e6,"source":"local","cid":"bafkx"}]}`,
		"/api/peers":      `{"peers":[{"id":"12D3KooWpeer","connection":"direct","transport":"tcp","latencyMs":1.5e6,"addrs":["/ip4/10.0.0.2/tcp/4681"]}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answers[r.URL.Path]))
	}))
	defer srv.Close()
	if _, errOut, code := metamesh(t, nil, "status", "--api", srv.URL+"/bad"); code == 0 || !strings.Contains(errOut, "provideQueue") {
		t.Errorf("a status with an integer in exponent form: exit %d %q, want an error naming provideQueue", code, errOut)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"lookup", "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"},
			// One column of names, as wide as the longest (canonical);
			// the size, runtime, resolution and channels written 3e6,
			// 5.4e3, 1.92e3 and 6e0 read as the whole numbers they are.
			[]string{"size      2.9 MiB\n", "runtime   1 h 30 min\n", "video     1920×1080\n", "audio     6 channels\n",
				"canonical bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku\n", "cids      2 (1 learned from peers)\n"}},
		{[]string{"status"}, []string{"files         2000000 local, 0 known from peers\n", "scan          watching: 2000000 files, 0 errors\n", "network       1000000 to announce\n"}},
		{[]string{"search", "big"}, []string{"2001", "S01E02", "2.9 MiB"}},
		{[]string{"peers"}, []string{"12D3KooWpeer  direct      tcp        1500000 ms  /ip4/10.0.0.2/tcp/4681\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			out, errOut, code := metamesh(t, nil, append(tt.args, "--api", srv.URL)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "learned/") {
				t.Errorf("output shows learned as metadata:\n%s", out)
			}
			if strings.Contains(out, "e+") {
				t.Errorf("output has a number in exponent form:\n%s", out)
			}
		})
	}
	out, _, code := metamesh(t, nil, "lookup", "--json", "--api", srv.URL, "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
	if code != 0 || !strings.Contains(out, `"sizeByte": 3e6`) {
		t.Errorf("lookup --json: exit %d\n%s", code, out)
	}
}

// testPeerID is a real peer ID (12D3KooW…), different on every call.
func testPeerID(t *testing.T) string {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// columns are where (in characters) the cells start in line, looked
// for in order; -1 for a cell not found.
func columns(line string, cells ...string) []int {
	var out []int
	from := 0
	for _, c := range cells {
		i := strings.Index(line[from:], c)
		if i < 0 {
			out = append(out, -1)
			continue
		}
		out = append(out, utf8.RuneCountInString(line[:from+i]))
		from += i + len(c)
	}
	return out
}

// TestClient_PeersOutput: metamesh peers shows every peer (by the name
// its household claims and the end of its ID, or its abbreviated ID when
// it sent none; two households that claim one name stay apart), its
// connection (a relayed one with the relay it goes through, abbreviated
// as search abbreviates peers), transport, latency and addresses, in
// columns under a header; a missing value is "-".
func TestClient_PeersOutput(t *testing.T) {
	direct, relayed, relay, old := testPeerID(t), testPeerID(t), testPeerID(t), testPeerID(t)
	twin := testPeerID(t)
	short := func(id string) string { return id[:8] + "…" + id[len(id)-6:] }
	circuit := "/ip4/203.0.113.7/udp/4681/quic-v1/p2p/" + relay + "/p2p-circuit"
	var b bytes.Buffer
	if err := printPeers(&b, []api.Peer{
		{ID: direct, Name: "Alice's NAS", Addrs: []string{"/ip4/192.168.1.20/tcp/4681", "/ip4/192.168.1.20/udp/4681/quic-v1"}, Connection: "direct", Transport: "tcp", LatencyMs: 0.412},
		{ID: relayed, Addrs: []string{circuit}, Connection: "relayed", Transport: "quic-v1", Relay: relay, LatencyMs: 35},
		{ID: old, Addrs: []string{}},
		{ID: twin, Name: "Alice's NAS", Addrs: []string{}},
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("want a header and four lines:\n%s", b.String())
	}
	want := [][]string{
		{"PEER", "CONNECTION", "TRANSPORT", "LATENCY", "ADDRESSES"},
		{"Alice's NAS (…" + direct[len(direct)-6:] + ")", "direct", "tcp", "0.412 ms", "/ip4/192.168.1.20/tcp/4681 /ip4/192.168.1.20/udp/4681/quic-v1"},
		{short(relayed), "relayed via " + short(relay), "quic-v1", "35 ms", circuit},
		{short(old), "-", "-", "-", "-"},
		{"Alice's NAS (…" + twin[len(twin)-6:] + ")", "-", "-", "-", "-"},
	}
	head := columns(lines[0], want[0]...)
	for i, cells := range want {
		for j, col := range columns(lines[i], cells...) {
			if col != head[j] {
				t.Errorf("line %d: %q at column %d, its header %s at %d:\n%s", i, cells[j], col, want[0][j], head[j], b.String())
			}
		}
	}
	b.Reset()
	if err := printPeers(&b, nil); err != nil || b.String() != "no connected peers\n" {
		t.Errorf("no peers: %q %v", b.String(), err)
	}
}

// TestClient_StatusOutput: metamesh status shows the reachability, the
// addresses confirmed dialable, each relay (reserved until when, or not,
// and why) with the node's circuit addresses through it, and the relay
// service, in the one column of names of the other lines. An api.Status
// goes through its JSON, as the command reads it.
func TestClient_StatusOutput(t *testing.T) {
	self, r1, r2 := testPeerID(t), testPeerID(t), testPeerID(t)
	c1 := "/ip4/203.0.113.7/tcp/4681/p2p/" + r1 + "/p2p-circuit/p2p/" + self
	c2 := "/ip4/203.0.113.7/udp/4681/quic-v1/p2p/" + r1 + "/p2p-circuit/p2p/" + self
	st := api.Status{
		Version: "dev", Name: "Alice's NAS", PeerID: self, Addrs: []string{"/ip4/192.168.1.5/tcp/4681"}, Libraries: []string{"/srv/media"},
		Roots: 12, Files: api.LibraryCounts{Local: 12, Loaded: true}, LibraryFiles: 14, Scan: api.ScanProgress{State: "watching", FilesDone: 12, FilesTotal: 12},
		Peers: 2, ProvideQueue: 3, Redis: api.RedisStatus{OK: true, Addr: "/data/redis/r.sock"},
		Reachability: "private", ObservedAddrs: []string{"/ip4/203.0.113.7/tcp/4681"},
		Relays: []api.Relay{
			{ID: r1, Reserved: true, Expires: "2026-05-01T12:00:00Z", Addrs: []string{c1, c2}},
			{ID: r2, Error: "reservation refused:\tRESERVATION_REFUSED\n(the relay is full)"},
		},
	}
	now := time.Date(2026, 5, 1, 11, 30, 0, 0, time.UTC)
	statusOf := func(st api.Status) string {
		t.Helper()
		raw, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var back api.Status
		if err := decodeJSON(raw, &back); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := printStatus(&b, back, now); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	want := "version       dev\n" +
		"name          Alice's NAS\n" +
		"peer ID       " + self + "\n" +
		"address       /ip4/192.168.1.5/tcp/4681\n" +
		"reachability  private\n" +
		"reachable     none confirmed\n" +
		"observed      /ip4/203.0.113.7/tcp/4681\n" +
		"relay         " + r1 + " reserved until 2026-05-01T12:00:00Z\n" +
		"relay circuit " + c1 + "\n" +
		"relay circuit " + c2 + "\n" +
		"relay         " + r2 + " not reserved (last error: reservation refused: RESERVATION_REFUSED (the relay is full))\n" +
		"relay service off\n" +
		"sharing       off: peers may not fetch this household's files (--share-files)\n" +
		"library       /srv/media\n" +
		"files         12 local, 0 known from peers\n" +
		"peers         2\n" +
		"scan          watching: 14 files, 0 errors\n" +
		"network       3 to announce\n" +
		"redis         ok=true /data/redis/r.sock\n"
	if got := statusOf(st); got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}

	// A library filled while the node watched it: its full scan found
	// nothing, the watcher took in ten files; the scan line counts the
	// library's files as they are, and a scan that runs says how far it
	// got.
	withFiles := st
	withFiles.Files = api.LibraryCounts{Local: 10, FromPeers: 2, Loaded: true}
	withFiles.LibraryFiles = 10
	withFiles.Scan = api.ScanProgress{State: "watching", Hashed: 10}
	running := st
	running.Scan = api.ScanProgress{State: "hashing", FilesDone: 5, FilesTotal: 12, Errors: 1}
	for _, tt := range []struct {
		st   api.Status
		want []string
	}{
		{withFiles, []string{"files         10 local, 2 known from peers\n", "scan          watching: 10 files, 0 errors, 10 hashed since the scan began\n"}},
		{running, []string{"scan          hashing: 5/12 files, 1 error\n"}},
	} {
		got := statusOf(tt.st)
		for _, line := range tt.want {
			if !strings.Contains(got, line) {
				t.Errorf("status:\n%s\nwant the line %q", got, line)
			}
		}
	}

	// What the node announces, in a household's words, from the
	// sweeping provider's statistics (its keys, regions and walks are
	// --json's).
	next := time.Date(2026, 5, 2, 8, 40, 0, 0, time.UTC) // 21 h 10 min after now
	online := api.ProvideStats{Keys: 35, Regions: 12, AvgPrefixLength: 3.58, NextReprovideAt: next, LastCycle: 1500 * time.Millisecond,
		Provided: 100012, Walks: 15, Messages: 420, Resumed: true, Connectivity: "online", CIDKeys: 10, TokenKeys: 25, Announced: 10}
	for _, tt := range []struct {
		name string
		edit func(*api.ProvideStats)
		want string
	}{
		{"online", func(*api.ProvideStats) {}, "announcing 10 files and 25 search words to the network; next round in 21 h"},
		{"queued and failed", func(p *api.ProvideStats) { p.Queued, p.Failed, p.NextReprovideAt = 4, 3, now.Add(90*time.Second) },
			"announcing 10 files and 25 search words to the network (4 still to go out the first time); next round in 2 min; 3 failed since the start"},
		{"no search words", func(p *api.ProvideStats) { p.TokenKeys, p.Announced, p.NextReprovideAt = 0, 1, time.Time{} },
			"announcing 1 file to the network"},
		{"nothing", func(p *api.ProvideStats) { p.TokenKeys, p.Announced, p.NextReprovideAt = 0, 0, now.Add(-time.Second) },
			"nothing to announce yet; next round now"},
		{"disconnected", func(p *api.ProvideStats) { p.Connectivity = "disconnected" },
			"not announcing: no peer answers now (it keeps trying); 10 files and 25 search words wait"},
		{"offline", func(p *api.ProvideStats) { p.Connectivity = "offline" },
			"not announcing: offline (no peers); 10 files and 25 search words wait"},
		{"offline with nothing", func(p *api.ProvideStats) { p.Connectivity, p.Announced, p.TokenKeys = "offline", 0, 0 },
			"not announcing: offline (no peers)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := online
			tt.edit(&pr)
			st := st
			st.Provide = &pr
			got := statusOf(st)
			if want := "network       " + tt.want + "\nfindable "; !strings.Contains(got, want) {
				t.Errorf("status lacks %q:\n%s", want, got)
			}
			for _, jargon := range []string{"keys", "regions", "prefix", "walks", "reprovide"} {
				if strings.Contains(got, jargon) {
					t.Errorf("status says %q:\n%s", jargon, got)
				}
			}
		})
	}

	// A public relay: its confirmed addresses, no relays, the service on.
	st.Reachability, st.ReachableAddrs, st.Relays, st.RelayService = "public", []string{"/ip4/198.51.100.9/tcp/4681", "/ip4/198.51.100.9/udp/4681/quic-v1"}, []api.Relay{}, true
	got := statusOf(st)
	for _, l := range []string{"reachability  public\n", "reachable     /ip4/198.51.100.9/tcp/4681\n", "reachable     /ip4/198.51.100.9/udp/4681/quic-v1\n",
		"relay         none\n", "relay service on (relays for other peers)\n"} {
		if !strings.Contains(got, l) {
			t.Errorf("public relay's status lacks %q:\n%s", l, got)
		}
	}
}

// TestClient_SharingLine: status says whether peers may fetch the
// household's files, and, when not, whether they may fetch its artwork.
func TestClient_SharingLine(t *testing.T) {
	for _, tt := range []struct {
		s    api.Sharing
		want string
	}{
		{api.Sharing{}, "off: peers may not fetch this household's files (--share-files)"},
		{api.Sharing{Art: true}, "off: peers may not fetch this household's files (--share-files), only their artwork (--share-art)"},
		{api.Sharing{Enabled: true, Art: true}, "on: peers may fetch this household's files"},
		{api.Sharing{Folders: []string{"/m/films"}, Art: true}, "folders: peers may fetch the files under /m/films; elsewhere only their artwork (--share-art)"},
		{api.Sharing{Enabled: true, Rate: 2e6}, "on: peers may fetch this household's files, at most 2 MB/s"},
	} {
		if got := sharingLine(tt.s); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
}
