package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/metamesh/node/protocol"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/record-vector.txt and search-vector.txt")

// TestRecord_GoldenVector pins the wire bytes of one request and one
// response, signed with a fixed Ed25519 key (its signatures are
// deterministic), so that other implementations have bytes to test
// against. The file says how each line was made.
func TestRecord_GoldenVector(t *testing.T) {
	f := fixedFixture(t)
	seed, err := f.key.Raw()
	if err != nil {
		t.Fatal(err)
	}
	r, err := protocol.NewRecord([]string{f.mid, f.sha, f.pb}, map[string]string{
		"title":             "Big Buck Bunny",
		"fileinfo/duration": "596.5",
		"sizeByte":          "276134947",
	}, f.id, f.when)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := r.MarshalRecord()
	if err != nil {
		t.Fatal(err)
	}
	env, err := protocol.SealRecord(r, f.key)
	if err != nil {
		t.Fatal(err)
	}
	var req, resp bytes.Buffer
	if err := protocol.WriteRequest(&req, f.pbV0); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteResponse(&resp, env); err != nil {
		t.Fatal(err)
	}
	lines := [][2]string{
		{"ed25519-seed", hex.EncodeToString(seed[:32])},
		{"peer", f.id.String()},
		{"asked", f.pbV0},
		{"request", hex.EncodeToString(req.Bytes())},
		{"payload", string(payload)},
		{"response", hex.EncodeToString(resp.Bytes())},
		{"not-found", "00"},
	}
	golden := checkVector(t, filepath.Join("testdata", "record-vector.txt"), `# The record protocol /metamesh/record/1.0.0, one exchange (see doc.go).
# ed25519-seed: the signer's private key seed (RFC 8032), hex.
# peer: its peer ID. asked: the CID the requester asked for (CIDv0 text).
# request: the request message as sent (varint length + canonical CID), hex.
# payload: the record JSON inside the envelope.
# response: the response message (varint length + signed envelope), hex;
#   Ed25519 signatures are deterministic, so sealing again gives these bytes.
# not-found: the response when the answerer has no record, hex.
`, lines)

	// The pinned bytes read back through the public API.
	reqBytes, _ := hex.DecodeString(golden["request"])
	asked, err := protocol.ReadRequest(bytes.NewReader(reqBytes))
	if err != nil || asked != f.pb {
		t.Fatalf("ReadRequest(golden) = %q, %v; want %q", asked, err, f.pb)
	}
	respBytes, _ := hex.DecodeString(golden["response"])
	body, err := protocol.ReadResponse(bytes.NewReader(respBytes))
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.OpenRecord(body, f.id, golden["asked"])
	if err != nil {
		t.Fatalf("OpenRecord(golden): %v", err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("golden record = %+v, want %+v", got, r)
	}
}

// checkVector compares lines (key, value) with the vector file at path,
// after writing it (header, then the lines) under -update-golden, and
// returns what the file holds.
func checkVector(t *testing.T, path, header string, lines [][2]string) map[string]string {
	t.Helper()
	if *updateGolden {
		var b strings.Builder
		b.WriteString(header)
		for _, l := range lines {
			fmt.Fprintf(&b, "%s %s\n", l[0], l[1])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden := readVector(t, path)
	for _, l := range lines {
		if got, want := l[1], golden[l[0]]; got != want {
			t.Errorf("%s:\n got %s\nwant %s", l[0], got, want)
		}
	}
	return golden
}

func readVector(tb testing.TB, path string) map[string]string {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatalf("%v (run with -update-golden to create it)", err)
	}
	defer fh.Close()
	out := make(map[string]string)
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
