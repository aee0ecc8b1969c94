package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/metamesh/node/api"
)

// TestClient_HouseholdsOutput: after the peers, metamesh peers lists the
// households among them by name (or abbreviated ID), whether their list
// is shared with this one, and its films and shows, in columns under a
// header; a list not shared has no counts.
func TestClient_HouseholdsOutput(t *testing.T) {
	alice, carol := testPeerID(t), testPeerID(t)
	short := func(id string) string { return id[:8] + "…" + id[len(id)-6:] }
	var b bytes.Buffer
	if err := printHouseholds(&b, []api.Household{
		{Peer: alice, Name: "Alice's NAS", Library: api.LibraryShared, Films: 12, Shows: 3},
		{Peer: carol, Library: api.LibraryRefused},
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "" {
		t.Fatalf("want a blank line, a header and two lines:\n%s", b.String())
	}
	want := [][]string{
		{"HOUSEHOLD", "LIBRARY", "FILMS", "SHOWS"},
		{"Alice's NAS (…" + alice[len(alice)-6:] + ")", "shared", "12", "3"},
		{short(carol), "refused", "-", "-"},
	}
	head := columns(lines[1], want[0]...)
	for i, cells := range want {
		for j, col := range columns(lines[i+1], cells...) {
			if col != head[j] {
				t.Errorf("line %d: %q at column %d, its header %s at %d:\n%s", i, cells[j], col, want[0][j], head[j], b.String())
			}
		}
	}
	b.Reset()
	if err := printHouseholds(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("no households: %q %v", b.String(), err)
	}
}
