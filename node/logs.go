package node

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	golog "github.com/ipfs/go-log/v2"
	"go.uber.org/zap/zapcore"
)

// libp2p and kad-dht log through go-log (zap). routeLibp2pLogs sends
// their lines into the node's slog handler, one level down: their errors
// (a peer that hung up, a failed dial) are warnings here, their warnings
// info, and their info and debug lines (per stream, per query) debug. A
// routing table refresh that fails only because there are no peers yet is
// debug too, and a multi-line message or error is joined into one line. At
// the node's info level go-log is set to warn, so the chatter below that
// is not even produced. go-log is process-wide: the last node started
// gets the lines.
func routeLibp2pLogs(log *slog.Logger, nodeLevel slog.Level) {
	routeMu.Lock()
	defer routeMu.Unlock()
	golog.SetPrimaryCore(&slogCore{log: log.With("component", "libp2p")})
	lvl := golog.LevelWarn
	if nodeLevel <= slog.LevelDebug {
		lvl = golog.LevelInfo
	}
	golog.SetAllLoggers(lvl)
}

var routeMu sync.Mutex

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
	msg := e.Message
	// kad-dht logs a failed refresh once with the error glued to the
	// message (Warn(msg, err)), then with an error field; give both the
	// same shape.
	if rest, ok := strings.CutPrefix(msg, refreshFailed); ok && rest != "" {
		if _, has := enc.Fields["error"]; !has {
			msg, enc.Fields["error"] = refreshFailed, rest
		}
	}
	if msg == refreshFailed && strings.HasPrefix(e.LoggerName, "dht") && lonely(enc.Fields["error"]) {
		lvl = slog.LevelDebug
		if !c.log.Enabled(context.Background(), lvl) {
			return nil
		}
	}
	args := make([]any, 0, 2+2*len(enc.Fields))
	args = append(args, "logger", e.LoggerName)
	for k, v := range enc.Fields {
		if s, ok := v.(string); ok {
			v = oneLine(s)
		}
		args = append(args, k, v)
	}
	c.log.Log(context.Background(), lvl, oneLine(msg), args...)
	return nil
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
