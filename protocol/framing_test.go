package protocol_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"
	"github.com/multiformats/go-varint"

	"github.com/metamesh/node/protocol"
)

// countingReader counts the bytes read from it, and fails the test if a
// read goes past max: framing must reject a long length before the body.
type countingReader struct {
	tb  testing.TB
	r   io.Reader
	n   int
	max int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	if c.max > 0 && c.n > c.max {
		c.tb.Fatalf("read %d bytes, want at most %d", c.n, c.max)
	}
	return n, err
}

// message is a length prefix for n followed by body.
func message(n uint64, body string) []byte {
	return append(varint.ToUvarint(n), body...)
}

// cidOfLength returns a canonical CID whose text is exactly n bytes, with an
// identity multihash of the right size.
func cidOfLength(tb testing.TB, n int) string {
	tb.Helper()
	for d := 1; d < n; d++ {
		mh, err := multihash.Encode(bytes.Repeat([]byte{'m'}, d), protocol.CodeIdentity)
		if err != nil {
			tb.Fatal(err)
		}
		if s := cid.NewCidV1(protocol.CodeURL, mh).String(); len(s) == n {
			return s
		} else if len(s) > n {
			break
		}
	}
	tb.Fatalf("no CID of %d characters", n)
	return ""
}

func TestRequest_RoundTrip(t *testing.T) {
	f := newFixture(t)
	for _, in := range []string{f.sha, f.pbV0, strings.ToUpper(f.mid)} {
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, in); err != nil {
			t.Fatal(err)
		}
		want, _ := protocol.Normalize(in)
		if !bytes.Equal(buf.Bytes(), message(uint64(len(want)), want)) {
			t.Errorf("WriteRequest(%q) wrote %q", in, buf.Bytes())
		}
		got, err := protocol.ReadRequest(&buf)
		if err != nil || got != want {
			t.Errorf("ReadRequest = %q, %v; want %q", got, err, want)
		}
	}
}

func TestReadRequest_Sizes(t *testing.T) {
	c512 := cidOfLength(t, 512)
	t.Run("512 bytes", func(t *testing.T) {
		got, err := protocol.ReadRequest(bytes.NewReader(message(512, c512)))
		if err != nil || got != c512 {
			t.Fatalf("got %q, %v", got, err)
		}
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, c512); err != nil {
			t.Fatalf("WriteRequest of 512 bytes: %v", err)
		}
	})
	t.Run("513 bytes rejected from the prefix", func(t *testing.T) {
		r := &countingReader{tb: t, r: bytes.NewReader(message(513, c512+"b")), max: 2}
		_, err := protocol.ReadRequest(r)
		if !errors.Is(err, protocol.ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
}

func TestReadRequest_Rejects(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		in   []byte
		want []error
	}{
		{"empty stream", nil, []error{protocol.ErrBadFrame, io.EOF}},
		{"truncated varint", []byte{0x80}, []error{protocol.ErrBadFrame, io.ErrUnexpectedEOF}},
		{"non-minimal varint", []byte{0x80, 0x00}, []error{protocol.ErrBadFrame, varint.ErrNotMinimal}},
		{"non-minimal varint of a length", []byte{0x85, 0x00, 'b', 'a', 'f', 'k', 'r'}, []error{protocol.ErrBadFrame}},
		{"varint longer than any allowed length", []byte{0x81, 0x80, 0x80, 0x00}, []error{protocol.ErrTooLarge}},
		{"huge varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, []error{protocol.ErrTooLarge}},
		{"truncated body", message(uint64(len(f.sha)), f.sha[:10]), []error{protocol.ErrBadFrame, io.ErrUnexpectedEOF}},
		{"empty body", message(0, ""), []error{protocol.ErrEmptyCID}},
		{"not UTF-8", message(3, "b\xff\xfe"), []error{protocol.ErrInvalidCID}},
		{"not a CID", message(5, "hello"), []error{protocol.ErrInvalidCID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := protocol.ReadRequest(bytes.NewReader(tt.in))
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("ReadRequest = %q, %v; want an error that is %v", got, err, want)
				}
			}
		})
	}
}

func TestWriteRequest_Rejects(t *testing.T) {
	for _, in := range []string{"", "nope", strings.Repeat("b", 513)} {
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, in); err == nil || buf.Len() != 0 {
			t.Errorf("WriteRequest(%.20q) = %v, wrote %d bytes; want an error and nothing written", in, err, buf.Len())
		}
	}
}

func TestResponse_RoundTrip(t *testing.T) {
	for _, n := range []int{1, 127, 128, 16383, 16384, 200_000, protocol.MaxRecordMessage} {
		body := bytes.Repeat([]byte{'e'}, n)
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, body); err != nil {
			t.Fatal(err)
		}
		if got := buf.Len(); got != varint.UvarintSize(uint64(n))+n {
			t.Errorf("%d: wrote %d bytes", n, got)
		}
		got, err := protocol.ReadResponse(&buf)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%d: ReadResponse = %d bytes, %v", n, len(got), err)
		}
	}
}

func TestResponse_NotFound(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), []byte{0}) {
		t.Fatalf("not found written as %x, want 00", buf.Bytes())
	}
	got, err := protocol.ReadResponse(&buf)
	if got != nil || err != nil {
		t.Errorf("ReadResponse = %v, %v; want nil, nil", got, err)
	}
}

func TestResponse_ReadsOneMessageOnly(t *testing.T) {
	stream := append(message(3, "one"), message(0, "")...)
	stream = append(stream, message(3, "two")...)
	r := bytes.NewReader(stream)
	for _, want := range []string{"one", "", "two"} {
		got, err := protocol.ReadResponse(r)
		if err != nil || string(got) != want {
			t.Errorf("ReadResponse = %q, %v; want %q", got, err, want)
		}
	}
}

func TestReadResponse_Rejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		max  int // bytes the reader may give before the rejection
		want []error
	}{
		{"oversized length", message(protocol.MaxRecordMessage+1, "xx"), 3, []error{protocol.ErrTooLarge}},
		{"largest 3-byte length", []byte{0xff, 0xff, 0x7f}, 3, []error{protocol.ErrTooLarge}},
		{"4-byte length", []byte{0x80, 0x80, 0x80, 0x01}, 3, []error{protocol.ErrTooLarge}},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 3, []error{protocol.ErrTooLarge}},
		{"empty stream", nil, 0, []error{protocol.ErrBadFrame, io.EOF}},
		{"truncated varint", []byte{0xff, 0xff}, 2, []error{protocol.ErrBadFrame, io.ErrUnexpectedEOF}},
		{"non-minimal varint", []byte{0x80, 0x80, 0x00}, 3, []error{protocol.ErrBadFrame, varint.ErrNotMinimal}},
		{"truncated body", message(1000, "short"), 0, []error{protocol.ErrBadFrame, io.ErrUnexpectedEOF}},
		{"truncated large body", message(protocol.MaxRecordMessage, strings.Repeat("x", 300_000)), 0, []error{protocol.ErrBadFrame, io.ErrUnexpectedEOF}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &countingReader{tb: t, r: bytes.NewReader(tt.in), max: tt.max}
			got, err := protocol.ReadResponse(r)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("ReadResponse = %d bytes, %v; want an error that is %v", len(got), err, want)
				}
			}
			if got != nil {
				t.Errorf("ReadResponse returned %d bytes with an error", len(got))
			}
		})
	}
}

func TestReadResponse_OversizedLengthAllocatesNothingLarge(t *testing.T) {
	in := message(protocol.MaxRecordMessage+1, "")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := protocol.ReadResponse(bytes.NewReader(in)); !errors.Is(err, protocol.ErrTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Small allocations for the errors; never a body.
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*16<<10 {
		t.Errorf("10 rejected messages allocated %d bytes", got)
	}
}

func TestWriteResponse_Oversize(t *testing.T) {
	var buf bytes.Buffer
	err := protocol.WriteResponse(&buf, make([]byte, protocol.MaxRecordMessage+1))
	if !errors.Is(err, protocol.ErrTooLarge) || buf.Len() != 0 {
		t.Errorf("got %v and %d bytes written; want ErrTooLarge and nothing", err, buf.Len())
	}
}

// longBase58CID returns a CID whose base58 text fits MaxCIDLength while
// its canonical (base32) form does not: a CIDv1 with a long identity
// multihash.
func longBase58CID(tb testing.TB) (b58, canonical string) {
	tb.Helper()
	for d := 300; d < 400; d++ {
		mh, err := multihash.Encode(bytes.Repeat([]byte{'m'}, d), protocol.CodeIdentity)
		if err != nil {
			tb.Fatal(err)
		}
		c := cid.NewCidV1(protocol.CodeRaw, mh)
		s, err := c.StringOfBase(multibase.Base58BTC)
		if err != nil {
			tb.Fatal(err)
		}
		if len(s) <= protocol.MaxCIDLength && len(c.String()) > protocol.MaxCIDLength {
			return s, c.String()
		}
	}
	tb.Fatal("no CID fits in base58 but not in base32")
	return "", ""
}

// A CID whose text fits the cap but whose canonical form does not is
// refused by Normalize (the API answers 400), so no lookup is started
// that the request could never carry.
func TestNormalize_CanonicalFormOverTheCap(t *testing.T) {
	b58, canonical := longBase58CID(t)
	t.Logf("base58 %d characters, canonical %d", len(b58), len(canonical))
	for _, in := range []string{b58, canonical} {
		got, err := protocol.Normalize(in)
		if in == canonical {
			// Over the cap as given: refused before decoding.
			if !errors.Is(err, protocol.ErrInvalidCID) {
				t.Errorf("Normalize(canonical) = %q, %v; want ErrInvalidCID", got, err)
			}
			continue
		}
		if got != "" || !errors.Is(err, protocol.ErrInvalidCID) || !errors.Is(err, protocol.ErrTooLarge) {
			t.Errorf("Normalize(base58) = %q, %v; want ErrInvalidCID and ErrTooLarge", got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "canonical form") {
			t.Errorf("error %q does not say the canonical form is too long", err)
		}
	}
	if _, err := protocol.Inspect(b58); err == nil {
		t.Error("Inspect accepted it")
	}
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, b58); err == nil || buf.Len() != 0 {
		t.Errorf("WriteRequest = %v, wrote %d bytes", err, buf.Len())
	}
	if got, err := protocol.ReadRequest(bytes.NewReader(message(uint64(len(b58)), b58))); !errors.Is(err, protocol.ErrInvalidCID) {
		t.Errorf("ReadRequest = %q, %v; want ErrInvalidCID", got, err)
	}
	// The longest canonical form still normalises.
	c512 := cidOfLength(t, protocol.MaxCIDLength)
	if got, err := protocol.Normalize(c512); err != nil || got != c512 {
		t.Errorf("Normalize(512 characters) = %q, %v", got, err)
	}
}
