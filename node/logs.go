package node

import (
	"context"
	"log/slog"
	"sync"

	golog "github.com/ipfs/go-log/v2"
	"go.uber.org/zap/zapcore"
)

// libp2p and kad-dht log through go-log (zap). routeLibp2pLogs sends
// their lines into the node's slog handler, one level down: their errors
// (a peer that hung up, a failed dial) are warnings here, their warnings
// info, and their info and debug lines (per stream, per query) debug. At
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
	args := make([]any, 0, 2+2*len(enc.Fields))
	args = append(args, "logger", e.LoggerName)
	for k, v := range enc.Fields {
		args = append(args, k, v)
	}
	c.log.Log(context.Background(), lvl, e.Message, args...)
	return nil
}

func (c *slogCore) Sync() error { return nil }
