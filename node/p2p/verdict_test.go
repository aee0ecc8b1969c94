package p2p

import (
	"strings"
	"testing"
	"time"

	ma "github.com/multiformats/go-multiaddr"
)

// The reachability verdict from what the node knows: libp2p's tracker,
// single dial-backs, the outside address its named peers report.
func TestVerdict(t *testing.T) {
	t.Parallel()
	wan := ma.StringCast("/ip4/192.0.0.131/udp/4681/quic-v1")
	pub := ma.StringCast("/ip4/192.0.0.130/tcp/4681")
	answers := func(addr ma.Multiaddr, reached, missed int) []dialBack {
		return []dialBack{{addr: addr, reached: reached, missed: missed, lastAt: time.Now()}}
	}
	for _, tt := range []struct {
		name      string
		in        verdictInput
		state     string
		reachable int
		basis     string // a part of it
	}{
		{"nothing known, private addresses", verdictInput{}, reachUnknown, 0, "addresses are private"},
		{"public interface, no answer yet", verdictInput{publicIface: true}, reachUnknown, 0, "no dial-back has answered yet"},
		{"tracker confirmed", verdictInput{confirmed: []ma.Multiaddr{pub}, publicIface: true}, reachPublic, 1, "answers that agree"},
		{"one dial-back reached", verdictInput{answers: answers(pub, 1, 0), publicIface: true}, reachPublic, 1, "dialed /ip4/192.0.0.130/tcp/4681 back (1 reached, 0 missed)"},
		{"tracker refuted", verdictInput{refuted: []ma.Multiaddr{wan}, outside: wan.String()}, reachPrivate, 0, "could not dial"},
		{"behind a NAT, a dial-back missed", verdictInput{answers: answers(wan, 0, 1), outside: wan.String()}, reachPrivate, 0,
			"see it at /ip4/192.0.0.131/udp/4681/quic-v1, which none of its interfaces has, and 1 dial-back to its addresses missed"},
		{"behind a NAT, no answer yet", verdictInput{outside: wan.String()}, reachUnknown, 0, "no dial-back"},
		// A missed dial-back alone does not make a node with a public
		// interface private (a firewall may have been in the way once):
		// the tracker's two answers decide.
		{"public interface, a dial-back missed", verdictInput{answers: answers(pub, 0, 1), publicIface: true}, reachUnknown, 0, "0 reached, 1 missed"},
		{"answers disagree", verdictInput{answers: answers(wan, 1, 1), outside: wan.String()}, reachUnknown, 0, "1 reached, 1 missed"},
		{"the tracker stands over single answers", verdictInput{refuted: []ma.Multiaddr{wan}, answers: answers(pub, 0, 3)}, reachPrivate, 0, "agree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state, reachable, basis := verdict(tt.in)
			if state != tt.state || len(reachable) != tt.reachable || !strings.Contains(basis, tt.basis) {
				t.Errorf("verdict = %s %v %q, want %s, %d reachable, a basis with %q", state, reachable, basis, tt.state, tt.reachable, tt.basis)
			}
		})
	}
}

// Answers older than answersKept no longer count.
func TestDialBacks_Expire(t *testing.T) {
	t.Parallel()
	var d dialBacks
	a := ma.StringCast("/ip4/192.0.0.131/tcp/4681")
	now := time.Now()
	d.add(a, false, now.Add(-2*answersKept))
	if got := d.current(now); len(got) != 0 {
		t.Errorf("an answer of two hours ago still counts: %v", got)
	}
	d.add(a, true, now)
	d.add(a, false, now)
	if got := d.current(now); len(got) != 1 || got[0].reached != 1 || got[0].missed != 1 {
		t.Errorf("current = %+v, want 1 reached and 1 missed", got)
	}
}
