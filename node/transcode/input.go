package transcode

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// inputs serves ffmpeg the files it reads, on a loopback address of
// their own (started with the first): http://127.0.0.1:<port>/<token>,
// one random token per running stream, with ranges, so that ffmpeg
// seeks in a peer's file as in a local one.
type inputs struct {
	mu   sync.Mutex
	ln   net.Listener
	srv  *http.Server
	open map[string]Opener
}

// input is one file being read.
type input struct {
	url    string
	remove func()
}

func (in *inputs) add(o Opener) (input, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ln == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return input{}, fmt.Errorf("transcode: the input address: %w", err)
		}
		in.ln = ln
		in.srv = &http.Server{Handler: http.HandlerFunc(in.serve), ReadHeaderTimeout: 10 * time.Second}
		go in.srv.Serve(ln)
	}
	b := make([]byte, 16)
	rand.Read(b)
	token := hex.EncodeToString(b)
	in.open[token] = o
	return input{url: "http://" + in.ln.Addr().String() + "/" + token, remove: func() {
		in.mu.Lock()
		delete(in.open, token)
		in.mu.Unlock()
	}}, nil
}

func (in *inputs) serve(w http.ResponseWriter, r *http.Request) {
	in.mu.Lock()
	o := in.open[strings.TrimPrefix(r.URL.Path, "/")]
	in.mu.Unlock()
	if o == nil {
		http.NotFound(w, r)
		return
	}
	f, err := o(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, f)
}

func (in *inputs) close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.srv == nil {
		return nil
	}
	err := in.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
