package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Event types of the meta:events stream. Path lifecycle events name a
// local path; key-set events name a root and the members it gained or
// lost. See doc.go for the fields of each.
const (
	EventAdd    = "add"    // a local path arrived
	EventChange = "change" // a local path's bytes changed
	EventDelete = "delete" // a local path is gone
	EventRename = "rename" // a local path moved (OldPath → Path)
	EventReset  = "reset"  // a full rescan started

	EventMint    = "mint"    // a root was created (Added: its midhash)
	EventConfirm = "confirm" // a full pass added the strong digests
	EventSplit   = "split"   // a midhash collision left for its own root
	EventMerge   = "merge"   // root folded into Into (and Into's gain)
	EventAlias   = "alias"   // members supplied from elsewhere were added
	EventPromote = "promote" // Path became the primary; an unconfirmed one drops the old digests
	EventPurge   = "purge"   // the root was deleted with every member
)

// Event is one meta:events entry.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Path      string `json:"path,omitempty"`
	Midhash   string `json:"midhash256,omitempty"`
	OldPath   string `json:"oldPath,omitempty"`
	Timestamp int64  `json:"timestamp"` // Unix milliseconds

	// Key-set events only.
	Root    RootID   `json:"root,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Into    RootID   `json:"into,omitempty"`

	// Keys are the fields an edit changed (a "change" that names a Root:
	// Store.Edit).
	Keys []string `json:"keys,omitempty"`
}

// KeySet reports whether e changes a root's key-set or paths: it names a
// Root. (An "add" that minted a root is both: a lifecycle event that also
// carries the new root's members.)
func (e Event) KeySet() bool { return e.Root != "" }

// Lifecycle reports whether e is a path lifecycle event (add, change,
// delete, rename, reset).
func (e Event) Lifecycle() bool {
	switch e.Type {
	case EventAdd, EventChange, EventDelete, EventRename, EventReset:
		return true
	}
	return false
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
		out = append(out, decodeEvent(m))
	}
	return out, nil
}

func decodeEvent(m redis.XMessage) Event {
	str := func(k string) string { v, _ := m.Values[k].(string); return v }
	ts, _ := strconv.ParseInt(str("timestamp"), 10, 64)
	return Event{
		ID: m.ID, Type: str("type"), Path: str("path"), Midhash: str("midhash256"), OldPath: str("oldPath"), Timestamp: ts,
		Root: RootID(str("root")), Added: strings.Fields(str("added")), Removed: strings.Fields(str("removed")), Into: RootID(str("into")), Keys: strings.Fields(str("keys")),
	}
}

// ErrFeedTrimmed: the capped meta:events stream was trimmed past the
// position a feed consumer asked to resume from; entries were lost to it
// and it must resync with a full sweep (Roots), then follow from Feed.Head.
var ErrFeedTrimmed = errors.New("event feed trimmed past the resume position")

// ErrFeedAhead means a resume position is newer than every entry the
// stream ever held: no consumer was handed it.
var ErrFeedAhead = errors.New("resume position newer than the newest event")

// Feed reads meta:events in order for one consumer (the announcer, the
// SSE endpoint), resuming from a stream ID. It is not safe for
// concurrent use; each consumer makes its own.
type Feed struct {
	s    *Store
	last string // last ID delivered; "" for the beginning
}

// Feed starts a consumer after stream ID after: "" (or "0") for the
// beginning, or an ID an earlier consumer delivered (Event.ID).
func (s *Store) Feed(after string) *Feed {
	if after == "0" {
		after = ""
	}
	return &Feed{s: s, last: after}
}

// feedInfo reads meta:events' XINFO STREAM; ok is false when there is no
// stream yet. XINFO answers that with an error reply that only its text
// tells apart, so a failed XINFO is followed by EXISTS: the common read
// stays one round trip.
func (s *Store) feedInfo(ctx context.Context) (*redis.XInfoStream, bool, error) {
	info, err := s.rdb.XInfoStream(ctx, keyEvents).Result()
	if err == nil {
		return info, true, nil
	}
	if n, e := s.rdb.Exists(ctx, keyEvents).Result(); e == nil && n == 0 {
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("store: read events: %w", err)
}

// FeedHead is the ID of the newest meta:events entry ("" when there is
// none): a consumer that has just swept the store follows from there.
func (s *Store) FeedHead(ctx context.Context) (string, error) {
	info, ok, err := s.feedInfo(ctx)
	if err != nil || !ok {
		return "", err
	}
	return info.LastGeneratedID, nil
}

// Position is the ID of the last event delivered ("" before any).
func (f *Feed) Position() string { return f.last }

// Next returns up to count events after the position, waiting up to block
// for one when none is there (block 0 returns at once). It returns
// ErrFeedTrimmed when entries after the position were trimmed from the
// capped stream; the position then moves to the stream's newest entry, so
// the consumer resyncs and carries on from there.
func (f *Feed) Next(ctx context.Context, count int64, block time.Duration) ([]Event, error) {
	if f.last != "" {
		trimmed, head, err := f.s.trimmedAfter(ctx, f.last)
		if err != nil {
			return nil, err
		}
		if trimmed {
			f.last = head
			return nil, fmt.Errorf("store: resume after %s: %w", f.last, ErrFeedTrimmed)
		}
	}
	from := f.last
	if from == "" {
		from = "0"
	}
	args := &redis.XReadArgs{Streams: []string{keyEvents, from}, Count: count, Block: -1}
	if block > 0 {
		args.Block = block
	}
	res, err := f.s.rdb.XRead(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read events: %w", err)
	}
	var out []Event
	for _, st := range res {
		for _, m := range st.Messages {
			out = append(out, decodeEvent(m))
		}
	}
	if len(out) > 0 {
		f.last = out[len(out)-1].ID
	}
	return out, nil
}

// trimmedAfter reports whether entries after ID id were trimmed or
// deleted, and the newest entry's ID.
func (s *Store) trimmedAfter(ctx context.Context, id string) (bool, string, error) {
	info, ok, err := s.feedInfo(ctx)
	switch {
	case err != nil:
		return false, "", err
	case !ok:
		return false, id, nil
	}
	// Trimming removes the oldest entries first, so entries after id were
	// lost only if id itself is gone: the oldest entry left is newer. (When
	// exactly id and nothing after it went, the consumer resyncs without
	// need; it never misses a loss.) Redis 7 also counts the entries ever
	// added, so a stream that never lost one says so (a consumer resuming
	// from 0-0 then replays it all), and keeps the newest ID XDEL removed.
	first := info.RecordedFirstEntryID
	if first == "" || first == "0-0" {
		first = info.FirstEntry.ID
	}
	removed := info.EntriesAdded == 0 || info.EntriesAdded > info.Length // 0: a server that does not count
	lost := removed && first != "" && streamIDLess(id, first) || streamIDLess(id, info.MaxDeletedEntryID)
	return lost, info.LastGeneratedID, nil
}

// CheckFeedPosition returns ErrFeedAhead (wrapped) when id is newer than
// the newest entry meta:events ever held, so a consumer cannot wait on a
// position no event will pass.
func (s *Store) CheckFeedPosition(ctx context.Context, id string) error {
	head, err := s.FeedHead(ctx)
	if err != nil {
		return err
	}
	if head == "" {
		head = "0-0"
	}
	if streamIDLess(head, id) {
		return fmt.Errorf("store: %s is newer than the newest event %s: %w", id, head, ErrFeedAhead)
	}
	return nil
}

// streamIDLess compares two stream IDs ("ms-seq").
func streamIDLess(a, b string) bool {
	am, as := splitID(a)
	bm, bs := splitID(b)
	return am < bm || (am == bm && as < bs)
}

func splitID(id string) (uint64, uint64) {
	ms, seq, _ := strings.Cut(id, "-")
	m, _ := strconv.ParseUint(ms, 10, 64)
	q, _ := strconv.ParseUint(seq, 10, 64)
	return m, q
}
