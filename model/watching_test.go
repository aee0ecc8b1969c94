package model_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/metamesh/node/model"
)

func TestCheckMemberName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"alice", true}, {"Carol Ann", true}, {"o-k_2", true}, {"Zoë", true}, {"李雷", true}, {strings.Repeat("é", 40), true},
		{"", false}, {" alice", false}, {"alice ", false}, {strings.Repeat("x", 41), false}, {"a/b", false}, {"a.b", false},
		{"tab\there", false}, {"\xff", false}, {"emoji🙂", false},
	} {
		err := model.CheckMemberName(tc.name)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, model.ErrBadRequest)) {
			t.Errorf("CheckMemberName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestWatchUpdate(t *testing.T) {
	for _, tc := range []struct {
		u       model.WatchUpdate
		bad     bool
		watched bool
	}{
		{u: model.WatchUpdate{Position: 10, Duration: 100}},
		{u: model.WatchUpdate{Position: 89.9, Duration: 100}},
		{u: model.WatchUpdate{Position: 90, Duration: 100}, watched: true},
		{u: model.WatchUpdate{Position: 1, Duration: 100, Watched: true}, watched: true},
		{u: model.WatchUpdate{Position: 100.5, Duration: 100}, watched: true},
		{u: model.WatchUpdate{Position: 102, Duration: 100}, bad: true},
		{u: model.WatchUpdate{Position: -1, Duration: 100}, bad: true},
		{u: model.WatchUpdate{Position: 1, Duration: 0}, bad: true},
		{u: model.WatchUpdate{Position: math.NaN(), Duration: 100}, bad: true},
		{u: model.WatchUpdate{Position: 1, Duration: math.Inf(1)}, bad: true},
		{u: model.WatchUpdate{Position: 1, Duration: 2e7}, bad: true},
	} {
		err := tc.u.Check()
		if (err != nil) != tc.bad {
			t.Errorf("Check(%+v) = %v, want bad %v", tc.u, err, tc.bad)
			continue
		}
		if tc.bad {
			continue
		}
		st := tc.u.State(42)
		if st.Watched != tc.watched || st.LastPlayed != 42 || st.Position > st.Duration {
			t.Errorf("State(%+v) = %+v, want watched %v", tc.u, st, tc.watched)
		}
	}
}
