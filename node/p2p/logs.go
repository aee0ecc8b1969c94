package p2p

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	golog "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/gologshim"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"go.uber.org/zap/zapcore"
)

// go-libp2p logs through slog (its gologshim package), kad-dht through
// go-log (zap). routeLibp2pLogs sends the lines of both into the node's
// slog handler, one level down: their errors (a peer that hung up, a
// failed dial) are warnings here, their warnings info, and their info and
// debug lines (per stream, per query) debug. Some lines only repeat what
// the node says itself, and are debug too (quieted). A multi-line message
// or error is joined into one line. At the node's info level go-log is
// set to warn, so the chatter below that is not even produced. The
// routing is process-wide: the last node started gets the lines.
func RouteLogs(log *slog.Logger, nodeLevel slog.Level) {
	routeMu.Lock()
	defer routeMu.Unlock()
	l := log.With("component", "libp2p")
	routed.Store(l)
	golog.SetPrimaryCore(&slogCore{log: l})
	lvl := golog.LevelWarn
	if nodeLevel <= slog.LevelDebug {
		lvl = golog.LevelInfo
	}
	golog.SetAllLoggers(lvl)
}

var (
	routeMu sync.Mutex
	// routed is the logger go-libp2p's slog lines go to; nil until a node
	// starts (they go to slog's default logger until then).
	routed atomic.Pointer[slog.Logger]
)

// go-libp2p's loggers take their handler when they first log: it must be
// the node's router from the start, before any libp2p code runs.
func init() { gologshim.SetDefaultHandler(libp2pHandler{}) }

// libp2pHandler is the slog.Handler of go-libp2p's loggers: it hands
// their records to libp2pLine, for the routed logger.
type libp2pHandler struct {
	attrs []slog.Attr // "logger" (the subsystem) and what With added
}

func (libp2pHandler) Enabled(ctx context.Context, lvl slog.Level) bool {
	return routedLogger().Enabled(ctx, down(lvl))
}

func (h libp2pHandler) Handle(_ context.Context, r slog.Record) error {
	fields := make(map[string]any, len(h.attrs)+r.NumAttrs())
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve().Any()
		if err, ok := v.(error); ok {
			v = err.Error()
		}
		fields[a.Key] = v
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	name, _ := fields["logger"].(string)
	delete(fields, "logger")
	libp2pLine(routedLogger(), down(r.Level), name, r.Message, fields)
	return nil
}

func (h libp2pHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return libp2pHandler{attrs: append(slices.Clone(h.attrs), attrs...)}
}

// WithGroup flattens: libp2p's records stay one level of key=value.
func (h libp2pHandler) WithGroup(string) slog.Handler { return h }

func routedLogger() *slog.Logger {
	if l := routed.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// down is a libp2p slog level one level down, as the node logs it.
func down(lvl slog.Level) slog.Level {
	switch {
	case lvl >= slog.LevelError:
		return slog.LevelWarn
	case lvl >= slog.LevelWarn:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// slogCore is a zapcore.Core writing to a slog.Logger.
type slogCore struct {
	log    *slog.Logger
	fields []zapcore.Field
}

func (c *slogCore) Enabled(zapcore.Level) bool { return true }

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{log: c.log, fields: append(append([]zapcore.Field{}, c.fields...), fields...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	lvl := slog.LevelDebug
	switch {
	case e.Level >= zapcore.ErrorLevel:
		lvl = slog.LevelWarn
	case e.Level == zapcore.WarnLevel:
		lvl = slog.LevelInfo
	}
	if !c.log.Enabled(context.Background(), lvl) {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field{}, c.fields...), fields...) {
		f.AddTo(enc)
	}
	libp2pLine(c.log, lvl, e.LoggerName, e.Message, enc.Fields)
	return nil
}

// libp2pLine writes one line of libp2p's or kad-dht's (logger is the
// subsystem) to log at lvl, or at debug when the line is quieted. Fields
// are written in key order.
func libp2pLine(log *slog.Logger, lvl slog.Level, logger, msg string, fields map[string]any) {
	// kad-dht logs a failed refresh once with the error glued to the
	// message (Warn(msg, err)), then with an error field; give both the
	// same shape.
	if rest, ok := strings.CutPrefix(msg, refreshFailed); ok && rest != "" {
		if _, has := fields["error"]; !has {
			msg, fields["error"] = refreshFailed, rest
		}
	}
	if quieted(logger, msg, fields) {
		lvl = slog.LevelDebug
	}
	if !log.Enabled(context.Background(), lvl) {
		return
	}
	args := make([]any, 0, 2+2*len(fields))
	args = append(args, "logger", logger)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		if s, ok := v.(string); ok {
			v = oneLine(s)
		}
		args = append(args, k, v)
	}
	log.Log(context.Background(), lvl, oneLine(msg), args...)
}

// quieted reports whether a libp2p line only repeats what the node says
// itself, or is no news, and goes to debug:
//   - fx's lines (system=fx: "OnStart hook failed", "start failed"):
//     libp2p.New returns the same error, and the node's start-up error
//     names it;
//   - kad-dht's "failed to bootstrap" a peer: the node dials its
//     --bootstrap peers itself and tells a failure once per outage;
//   - a routing table refresh that failed only because there are no peers
//     yet (lonely).
func quieted(logger, msg string, fields map[string]any) bool {
	switch {
	case fields["system"] == "fx":
		return true
	case strings.HasPrefix(logger, "dht") && msg == "failed to bootstrap":
		return true
	case strings.HasPrefix(logger, "dht") && msg == refreshFailed:
		return lonely(fields["error"])
	}
	return false
}

// refreshFailed is what kad-dht logs when a routing table refresh fails.
const refreshFailed = "failed when refreshing routing table"

// lonely reports whether a failed refresh failed only because the routing
// table is empty: every error in it (errors.Join puts one per line) is
// kad-dht's "failed to find any peer in table". A node without peers
// (the first of a household, one whose peers are all offline) meets this
// at every start and every refresh; it is not worth a line at info.
func lonely(err any) bool {
	s, ok := err.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.Contains(line, "failed to find any peer in table") {
			return false
		}
	}
	return true
}

// oneLine joins the lines of a multi-line message or error (errors.Join
// puts one error per line), so that every record stays on one line.
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

func (c *slogCore) Sync() error { return nil }

// dialReason is why a dial failed, on one line: the cause alone when one
// address was tried ("connection refused"), "address: cause" for each
// when several were, instead of the swarm's "failed to dial: failed to
// dial <peer>: all dials failed" and a line per address.
func dialReason(err error) string {
	var de *swarm.DialError
	if !errors.As(err, &de) {
		return oneLine(err.Error())
	}
	switch len(de.DialErrors) {
	case 0:
		if de.Cause != nil {
			return dialCause(de.Cause)
		}
		return oneLine(err.Error())
	case 1:
		return dialCause(de.DialErrors[0].Cause)
	}
	parts := make([]string, 0, len(de.DialErrors))
	for _, te := range de.DialErrors {
		parts = append(parts, te.Address.String()+": "+dialCause(te.Cause))
	}
	return strings.Join(parts, "; ")
}

// dialCause is one address's dial error without the net package's
// layers ("dial tcp4 127.0.0.1:4681: connect: connection refused" is
// "connection refused").
func dialCause(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, context.DeadlineExceeded), os.IsTimeout(err):
		return "timed out"
	}
	return oneLine(err.Error())
}
