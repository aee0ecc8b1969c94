package fetch

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// stallGuard ends a download when the node sends nothing for d (no
// answer, then no byte): the only limit on its time, since a file that
// comes from peers may come slowly for minutes but must not hang
// forever. d 0 never ends it. Its timer fires on a goroutine of its own;
// the rest is called from the download's.
type stallGuard struct {
	d       time.Duration
	timer   *time.Timer
	cancel  context.CancelCauseFunc
	got     atomic.Int64
	started atomic.Bool           // the node answered
	fired   atomic.Pointer[error] // why the guard ended the download
}

// newStallGuard is a guard over a request made under ctx, which the
// guard cancels when it fires.
func newStallGuard(parent context.Context, d time.Duration) (ctx context.Context, g *stallGuard) {
	ctx, cancel := context.WithCancelCause(parent)
	g = &stallGuard{d: d, cancel: cancel}
	if d > 0 {
		g.timer = time.AfterFunc(d, func() {
			err := g.stalled()
			g.fired.Store(&err)
			cancel(err)
		})
	}
	return ctx, g
}

// stalled is the error of a download that stopped, said with how far it
// got.
func (g *stallGuard) stalled() error {
	if !g.started.Load() {
		return fmt.Errorf("the node did not answer in %s (--stall)", g.d)
	}
	return fmt.Errorf("the node sent nothing for %s after %s (--stall)", g.d, BytesText(g.got.Load()))
}

// answered notes that the node answered: the wait for bytes begins.
func (g *stallGuard) answered() {
	g.started.Store(true)
	g.progress()
}

func (g *stallGuard) progress() {
	if g.timer != nil {
		g.timer.Reset(g.d)
	}
}

// cause is the stall error when the guard ended the download, else nil.
func (g *stallGuard) cause() error {
	if e := g.fired.Load(); e != nil {
		return *e
	}
	return nil
}

func (g *stallGuard) stop() {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.cancel(nil)
}

// reader is r with every byte read restarting the guard's wait.
func (g *stallGuard) reader(r io.Reader) io.Reader {
	return onRead{r, func(n int64) { g.got.Add(n); g.progress() }}
}

// onRead is r telling fn how many bytes each Read returned.
type onRead struct {
	r  io.Reader
	fn func(n int64)
}

func (o onRead) Read(b []byte) (int, error) {
	n, err := o.r.Read(b)
	if n > 0 {
		o.fn(int64(n))
	}
	return n, err
}
