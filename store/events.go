package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Event types of the meta:events stream.
const (
	EventAdd    = "add"
	EventChange = "change"
	EventDelete = "delete"
	EventRename = "rename"
	EventReset  = "reset"
)

// Event is one meta:events entry.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Path      string `json:"path"`
	Midhash   string `json:"midhash256,omitempty"`
	OldPath   string `json:"oldPath,omitempty"`
	Timestamp int64  `json:"timestamp"` // Unix milliseconds
}

// AppendEvent adds an event that is not part of a lifecycle script, such
// as "reset" when a full rescan starts.
func (s *Store) AppendEvent(ctx context.Context, e Event) error {
	if e.Timestamp == 0 {
		e.Timestamp = time.Now().UnixMilli()
	}
	return s.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: keyEvents, MaxLen: s.evMax, Approx: true,
		Values: []any{"type", e.Type, "path", e.Path, "midhash256", e.Midhash, "oldPath", e.OldPath, "timestamp", e.Timestamp},
	}).Err()
}

// Events returns up to count events strictly after stream ID after ("" or
// "0" for the beginning).
func (s *Store) Events(ctx context.Context, after string, count int64) ([]Event, error) {
	start := "-"
	if after != "" && after != "0" {
		start = "(" + after
	}
	msgs, err := s.rdb.XRangeN(ctx, keyEvents, start, "+", count).Result()
	if err != nil {
		return nil, fmt.Errorf("store: read events: %w", err)
	}
	out := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		str := func(k string) string { v, _ := m.Values[k].(string); return v }
		ts, _ := strconv.ParseInt(str("timestamp"), 10, 64)
		out = append(out, Event{ID: m.ID, Type: str("type"), Path: str("path"), Midhash: str("midhash256"), OldPath: str("oldPath"), Timestamp: ts})
	}
	return out, nil
}
