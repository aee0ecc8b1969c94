package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/internal/waiting"
)

// stallBackend serves one file of data whose Close is told on closed:
// the handler has returned.
type stallBackend struct {
	*fakeBackend
	data   []byte
	closed chan struct{}
}

type signalCloser struct {
	io.ReadSeeker
	closed chan struct{}
}

func (c signalCloser) Close() error { c.closed <- struct{}{}; return nil }

func (b *stallBackend) File(_ context.Context, c string) (*api.File, error) {
	return &api.File{Content: signalCloser{bytes.NewReader(b.data), b.closed}, Name: "big.bin", Size: int64(len(b.data)),
		ModTime: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), CID: c}, nil
}

func newStallServer(t *testing.T, size int, stall time.Duration) (*stallBackend, string) {
	t.Helper()
	b := &stallBackend{fakeBackend: &fakeBackend{}, data: bytes.Repeat([]byte("metamesh"), size/8), closed: make(chan struct{}, 1024)}
	ts := httptest.NewServer(newServer(b, api.Options{Stall: stall}))
	t.Cleanup(ts.Close)
	return b, ts.Listener.Addr().String()
}

// stalledReader asks for the file and reads nothing; small, its receive
// buffer holds little.
func stalledReader(t *testing.T, addr string, small bool) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if small {
		c.(*net.TCPConn).SetReadBuffer(4096)
	}
	if _, err := fmt.Fprintf(c, "GET /api/file/%s HTTP/1.1\r\nHost: %s\r\n\r\n", held, addr); err != nil {
		t.Fatal(err)
	}
	return c
}

func waitClosed(t *testing.T, b *stallBackend, n int) {
	t.Helper()
	for range n {
		select {
		case <-b.closed:
		case <-waiting.After():
			t.Fatal("a handler still writes to a client that reads nothing")
		}
	}
}

// A client that stops reading a file is cut once a write has waited
// Stall; what it got is less than the file.
func TestServer_FileStalledReaderIsCut(t *testing.T) {
	b, addr := newStallServer(t, 64<<20, 300*time.Millisecond)
	c := stalledReader(t, addr, false)
	defer c.Close()
	waitClosed(t, b, 1)
	got, _ := io.Copy(io.Discard, c)
	if got >= int64(len(b.data)) {
		t.Errorf("the stalled client got all %d bytes", got)
	}
}

// A slow client that keeps reading gets the whole file, however long it
// takes beyond Stall: 128 reads 50 ms apart, 6.4 s in all, against a
// Stall of 5 s (a hundred times a pause between two reads, so a loaded
// machine that stretches a pause does not cut the client).
func TestServer_FileSlowReaderIsServed(t *testing.T) {
	b, addr := newStallServer(t, 16<<20, 5*time.Second)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/file/%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", held, addr)
	var got int64
	buf := make([]byte, 128<<10)
	for {
		n, err := io.ReadFull(c, buf)
		got += int64(n)
		if err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got < int64(len(b.data)) {
		t.Errorf("the slow client got %d of %d bytes", got, len(b.data))
	}
}

// Three hundred clients that read nothing hold no descriptor of the
// node's once each is cut: only their own sockets are left open.
func TestServer_FileStalledReadersReturnDescriptors(t *testing.T) {
	const n = 300
	b, addr := newStallServer(t, 16<<20, 500*time.Millisecond)
	base := openFDs(t)
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = stalledReader(t, addr, true)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	waitClosed(t, b, n)
	// The server's side of each connection is closed once it was cut;
	// allow for the listener's and the runtime's few.
	waiting.Until(t, "the stalled clients' descriptors to be closed", func() string {
		if open := openFDs(t); open > base+n+16 {
			return fmt.Sprintf("%d descriptors open with %d stalled clients (%d before): the node still holds theirs", open, n, base)
		}
		return ""
	})
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// blockingWriter holds every write of the body until release closes.
type blockingWriter struct {
	h       http.Header
	code    int
	writing chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Header() http.Header  { return w.h }
func (w *blockingWriter) WriteHeader(code int) { w.code = code }
func (w *blockingWriter) Write(b []byte) (int, error) {
	select {
	case w.writing <- struct{}{}:
	default:
	}
	<-w.release
	return len(b), nil
}

// A stranger (--public-read, no token) holds at most four file streams
// at once: a fifth is 429 while they run, and served once one ends; a
// client with the token is not counted.
func TestServer_FileStreamsPerStranger(t *testing.T) {
	const tok = "0123456789abcdef0123"
	b := &stallBackend{fakeBackend: &fakeBackend{}, data: bytes.Repeat([]byte("x"), 1<<20), closed: make(chan struct{}, 16)}
	srv := api.New(b, slog.New(slog.DiscardHandler), api.Options{Access: api.Access{PublicRead: true, Token: tok}})
	get := func(remote, token string, w http.ResponseWriter) {
		r := httptest.NewRequest("GET", "http://nas.local:4680/api/file/"+held, nil)
		r.RemoteAddr = remote
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		srv.ServeHTTP(w, r)
	}
	release := make(chan struct{})
	held := make([]*blockingWriter, 4)
	for i := range held {
		held[i] = &blockingWriter{h: http.Header{}, writing: make(chan struct{}, 1), release: release}
		go get("192.0.2.7:"+strconv.Itoa(4000+i), "", held[i])
		<-held[i].writing
	}
	rec := httptest.NewRecorder()
	get("192.0.2.7:5000", "", rec)
	if rec.Code != 429 || !strings.Contains(rec.Body.String(), "at most 4 files at once") {
		t.Errorf("a fifth stream: %d %s, want 429", rec.Code, rec.Body)
	}
	if rec := httptest.NewRecorder(); func() bool { get("192.0.2.8:4000", "", rec); return rec.Code != 200 }() {
		t.Errorf("another address: %d, want 200", rec.Code)
	}
	if rec := httptest.NewRecorder(); func() bool { get("192.0.2.7:5001", tok, rec); return rec.Code != 200 }() {
		t.Errorf("with the token: %d, want 200", rec.Code)
	}
	close(release)
	waitClosed(t, b, 4+2)
	if rec := httptest.NewRecorder(); func() bool { get("192.0.2.7:5002", "", rec); return rec.Code != 200 }() {
		t.Errorf("once the streams ended: %d, want 200", rec.Code)
	}
}
