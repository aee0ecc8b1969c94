package announce

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	mh "github.com/multiformats/go-multihash"

	"github.com/metamesh/node/internal/dhttest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/model"
	"github.com/metamesh/node/node/handoff"
	"github.com/metamesh/node/node/p2p"
)

// member is a host on loopback with the node's DHT (a server, made on
// handoff.Observe) and no handoff service: nothing hands it records.
type member struct {
	key  crypto.PrivKey
	h    host.Host
	d    *dht.IpfsDHT
	held *handoff.Held
	down bool
}

// startMember starts a member with identity key (a new one when nil).
func startMember(t *testing.T, key crypto.PrivKey) *member {
	t.Helper()
	if key == nil {
		var err error
		if key, _, err = crypto.GenerateEd25519Key(nil); err != nil {
			t.Fatal(err)
		}
	}
	h, err := libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	m := &member{key: key, h: h, held: handoff.NewHeld(p2p.ProviderValidity(0))}
	m.d, err = dht.New(handoff.Observe(h, m.held), p2p.DHTOptions(p2p.Config{}, dht.ModeServer, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	return m
}

func (m *member) stop() {
	if !m.down {
		m.down = true
		m.d.Close()
		m.h.Close()
	}
}

func connect(t *testing.T, a, b *member) {
	t.Helper()
	dhttest.Connect(t, a.h, a.d, b.h, b.d)
}

// federation is a household with a Sweeper and the other members, all
// connected to one another.
type federation struct {
	home   *member
	sw     *Sweeper
	others []*member
}

func newFederation(t *testing.T, n int) *federation {
	t.Helper()
	f := &federation{home: startMember(t, nil)}
	for range n {
		o := startMember(t, nil)
		for _, p := range append([]*member{f.home}, f.others...) {
			connect(t, o, p)
		}
		f.others = append(f.others, o)
	}
	var err error
	f.sw, err = NewSweeper(f.home.d, f.home.held, t.TempDir(), nil, 22*time.Hour, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sw.close() })
	return f
}

// provide gives the sweeper n keys and waits until every region was
// provided.
func (f *federation) provide(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		sum := sha256.Sum256(fmt.Appendf(nil, "file %d", i))
		k, err := mh.Encode(sum[:], mh.SHA2_256)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.sw.start(cid.NewCidV1(cid.Raw, k)); err != nil {
			t.Fatal(err)
		}
	}
	asked := time.Now()
	waiting.For(t, "every region provided", func() bool {
		rs, _ := f.report(t)
		keys := 0
		for _, r := range rs {
			if r.LastProvidedAt.IsZero() {
				f.askAgain(t, &asked)
				return false
			}
			keys += r.Keys
		}
		return keys == n
	})
	waiting.For(t, "the first provides done", func() bool {
		st, err := f.sw.sp.Stats(t.Context())
		if err != nil || st.Queues.PendingKeyProvides != 0 || st.Queues.PendingRegionProvides != 0 {
			f.askAgain(t, &asked)
			return false
		}
		return st.Operations.Ongoing.RegionProvides == 0 && st.Operations.Ongoing.KeyProvides == 0
	})
}

// askAgain provides every key again when the last ask was 15 s ago. A
// provide that fails (a walk that times out on a busy machine) goes back
// to the provider's queue, which it works through again only at its next
// retry, five minutes on: a test that waits for provides asks again in
// the meantime, as that retry would.
func (f *federation) askAgain(t *testing.T, asked *time.Time) {
	t.Helper()
	if time.Since(*asked) < 15*time.Second {
		return
	}
	if err := f.sw.again(t.Context()); err != nil {
		t.Fatal(err)
	}
	*asked = time.Now()
}

// report is what /api/status.provide says of the regions and checks.
func (f *federation) report(t *testing.T) ([]model.ProvidedRegion, model.Findable) {
	t.Helper()
	st, err := f.sw.sp.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return f.sw.ledger.report(st.Schedule.AvgPrefixLength)
}

// checkNow runs a findability check at once, as the loop does every
// CheckEvery.
func (f *federation) checkNow(t *testing.T) check {
	t.Helper()
	st, err := f.sw.sp.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.sw.check(t.Context(), st.Schedule.AvgPrefixLength)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A household whose records are held by every peer closest to its keys
// is reported findable by all of them; once some of those peers lose
// their records (restarted with empty stores, nothing to refill them),
// the next check reports fewer holding, and says which.
func TestFindable_ClosestLoseRecords(t *testing.T) {
	t.Parallel()
	const others, lost = 4, 2
	f := newFederation(t, others)
	f.provide(t, 6)

	var c check
	waiting.For(t, "a check with every closest peer holding the record", func() bool {
		c = f.checkNow(t)
		return c.closest == others && c.holding == others
	})
	_, fd := f.report(t)
	if fd.Regions == 0 || fd.Closest != others*fd.Regions || fd.Holding != fd.Closest || fd.CheckedAt.IsZero() {
		t.Errorf("findable %+v, want %d closest a region, all holding", fd, others)
	}
	if fd.Checks < 1 {
		t.Errorf("checks %d, want at least 1", fd.Checks)
	}
	if sent := f.sw.checkMessages.Load(); sent < int64(others) {
		t.Errorf("check messages %d, want at least one GET_PROVIDERS to each of %d peers", sent, others)
	}
	provided := f.sw.messages.Load()

	for i, o := range f.others[:lost] {
		o.stop()
		f.others[i] = startMember(t, o.key)
	}
	for i, o := range f.others[:lost] {
		for _, p := range append([]*member{f.home}, f.others[lost:]...) {
			connect(t, o, p)
		}
		for _, p := range f.others[i+1 : lost] {
			connect(t, o, p)
		}
	}
	waiting.For(t, "a check with the restarted peers closest and not holding", func() bool {
		c = f.checkNow(t)
		return c.closest == others && c.holding == others-lost
	})
	// Checks go round the regions: once each had one since the loss, the
	// sum says it of all of them.
	waiting.For(t, "every region checked since the loss", func() bool {
		rs, fd := f.report(t)
		if fd.Regions == len(rs) && fd.Closest == others*len(rs) && fd.Holding == (others-lost)*len(rs) {
			return true
		}
		f.checkNow(t)
		return false
	})
	if got := f.sw.messages.Load(); got != provided {
		t.Errorf("the provider's messages went from %d to %d with only checks sent", provided, got)
	}
}

// Each region says when it was last provided: set by the first provide,
// moved on by a reprovide of every key. The provider may measure a new
// mean prefix length in between (the regions split or merge), so the
// reprovide is judged against the newest first provide of any region.
func TestRegions_ProvidedAndReprovided(t *testing.T) {
	t.Parallel()
	const n = 5
	f := newFederation(t, 3)
	f.provide(t, n)
	before, _ := f.report(t)
	var firstDone time.Time
	for _, r := range before {
		if r.NewestProvidedAt.Before(r.LastProvidedAt) {
			t.Errorf("region %q: newest provide %v before its oldest %v", r.Prefix, r.NewestProvidedAt, r.LastProvidedAt)
		}
		if r.NewestProvidedAt.After(firstDone) {
			firstDone = r.NewestProvidedAt
		}
	}

	var asked time.Time
	waiting.Until(t, "every region provided again", func() string {
		f.askAgain(t, &asked)
		after, _ := f.report(t)
		keys := 0
		for _, r := range after {
			keys += r.Keys
			if !r.LastProvidedAt.After(firstDone) {
				return fmt.Sprintf("region %q (%d keys) last provided %v, the first provides ended %v",
					r.Prefix, r.Keys, r.LastProvidedAt.Format(time.StampMicro), firstDone.Format(time.StampMicro))
			}
		}
		if keys != n {
			return fmt.Sprintf("%d keys in %d regions, want %d", keys, len(after), n)
		}
		return ""
	})
}
