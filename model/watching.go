package model

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// MaxMemberName bounds a household member's name, in characters.
const MaxMemberName = 40

// CheckMemberName reports whether name may name a member of the
// household: 1 to MaxMemberName characters, each a letter, a digit, a
// space, '-' or '_', neither beginning nor ending with a space. The
// error wraps ErrBadRequest and says what is wrong.
func CheckMemberName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: member name is not UTF-8", ErrBadRequest)
	case n == 0:
		return fmt.Errorf("%w: member name is empty: give 1 to %d letters, digits, spaces, - or _", ErrBadRequest, MaxMemberName)
	case n > MaxMemberName:
		return fmt.Errorf("%w: member name of %d characters, at most %d", ErrBadRequest, n, MaxMemberName)
	case name[0] == ' ' || name[len(name)-1] == ' ':
		return fmt.Errorf("%w: member name %q begins or ends with a space", ErrBadRequest, name)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ' ' && r != '-' && r != '_' {
			return fmt.Errorf("%w: member name %q holds %q: only letters, digits, spaces, - and _", ErrBadRequest, name, r)
		}
	}
	return nil
}

// WatchedAt is the share of a film's duration past which it counts as
// watched.
const WatchedAt = 0.9

// MaxWatchSeconds bounds a position and a duration (a little over 115
// days).
const MaxWatchSeconds = 1e7

// WatchUpdate is the body of PUT /api/members/<name>/watch/<cid>: where
// the player is in the file, the file's duration (seconds), and whether
// it played to its end.
type WatchUpdate struct {
	Position float64 `json:"position"`
	Duration float64 `json:"duration"`
	Watched  bool    `json:"watched"`
}

// Check refuses a position or duration that is not a finite number of
// seconds from 0 to MaxWatchSeconds, a duration of 0, or a position past
// the duration.
func (u WatchUpdate) Check() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"position", u.Position}, {"duration", u.Duration}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 || v.x > MaxWatchSeconds {
			return fmt.Errorf("%w: %s %v: want seconds from 0 to %g", ErrBadRequest, v.name, v.x, float64(MaxWatchSeconds))
		}
	}
	if u.Duration == 0 {
		return fmt.Errorf("%w: duration 0: give the file's duration in seconds", ErrBadRequest)
	}
	if u.Position > u.Duration+1 {
		return fmt.Errorf("%w: position %v is past the duration %v", ErrBadRequest, u.Position, u.Duration)
	}
	return nil
}

// State is the watch state an update leaves, played at unix ms now: a
// file played to its end or past WatchedAt of its duration is watched.
func (u WatchUpdate) State(now int64) WatchState {
	pos := min(u.Position, u.Duration)
	return WatchState{Position: pos, Duration: u.Duration, Watched: u.Watched || pos >= WatchedAt*u.Duration, LastPlayed: now}
}

// WatchState is how far a member watched one file: the position and
// duration in seconds, whether it is watched, and when it was last
// played (Unix ms). It is the household's own: never sent to peers.
type WatchState struct {
	Position   float64 `json:"position"`
	Duration   float64 `json:"duration"`
	Watched    bool    `json:"watched"`
	LastPlayed int64   `json:"lastPlayed"`
}

// InProgress reports whether the file was started and not finished.
func (w WatchState) InProgress() bool { return !w.Watched && w.Position > 0 }

// MembersAnswer is the answer of GET /api/members.
type MembersAnswer struct {
	// Members are the household's members, sorted.
	Members []string `json:"members"`
	// Current is the member this browser chose (its cookie
	// metamesh_member, or the header X-Metamesh-Member), when it names
	// a member.
	Current string `json:"current,omitempty"`
}

// WatchEntry is one file's watch state for a member: its canonical CID
// and, in lists, what the library's lists show of it.
type WatchEntry struct {
	CID string `json:"cid"`
	WatchState
	File *LibraryEntry `json:"file,omitempty"`
}

// WatchList is the answer of GET /api/members/<name>/watch: every file
// the member played, newest first.
type WatchList struct {
	Member  string       `json:"member"`
	Entries []WatchEntry `json:"entries"`
}

// ContinueAnswer is the answer of GET /api/members/<name>/continue.
type ContinueAnswer struct {
	Member string `json:"member"`
	// Next are the episodes that follow those the member finished last
	// (one a show, newest first), not yet started.
	Next []NextEpisode `json:"next"`
	// Entries are the files in progress, the last played first, each
	// with its entry.
	Entries []WatchEntry `json:"entries"`
}

// NextEpisode is the episode that follows another: the answer of GET
// /api/members/<name>/next/<cid>, and an entry of ContinueAnswer.Next.
type NextEpisode struct {
	// After is the episode it follows (its canonical CID).
	After string `json:"after"`
	// Episode is the next one's entry (its CID, show, season, episode,
	// title); State its watch state for the member, when it has one.
	Episode LibraryEntry `json:"episode"`
	State   *WatchState  `json:"state,omitempty"`
}
