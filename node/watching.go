package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/metamesh/node/api"
	"github.com/metamesh/node/store"
)

// maxNextSuggested bounds ContinueAnswer.Next.
const maxNextSuggested = 10

// addUsers makes every --users name a member of the household (those
// that are members already stay as they are).
func (n *Node) addUsers(ctx context.Context) error {
	for _, u := range n.cfg.Users {
		if err := n.st.AddMember(ctx, u); err != nil && !errors.Is(err, store.ErrMemberExists) {
			return fmt.Errorf("--users %q: %w", u, err)
		}
	}
	return nil
}

// memberErr is the store's error about member as the API says it.
func memberErr(err error, member string) error {
	switch {
	case errors.Is(err, store.ErrMemberExists):
		return fmt.Errorf("%w: a member named %q is already in the household", api.ErrConflict, member)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: no member named %q (GET /api/members lists them)", api.ErrNotFound, member)
	}
	return err
}

// Members are the household's members (api.Watcher).
func (b *backend) Members(ctx context.Context) ([]string, error) { return b.n.st.Members(ctx) }

// AddMember adds a member (api.Watcher).
func (b *backend) AddMember(ctx context.Context, name string) error {
	return memberErr(b.n.st.AddMember(ctx, name), name)
}

// RemoveMember removes a member and all it watched (api.Watcher).
func (b *backend) RemoveMember(ctx context.Context, name string) error {
	return memberErr(b.n.st.RemoveMember(ctx, name), name)
}

// watchedRoot is the root of the file cid names.
func (n *Node) watchedRoot(ctx context.Context, cid string) (store.RootID, error) {
	r, err := n.st.GetByCID(ctx, cid)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w: no file of CID %s on this node", api.ErrNotFound, cid)
	}
	return r, err
}

// SaveWatch records how far member is in the file (api.Watcher).
func (b *backend) SaveWatch(ctx context.Context, member, cid string, u api.WatchUpdate) (api.WatchEntry, error) {
	r, err := b.n.watchedRoot(ctx, cid)
	if err != nil {
		return api.WatchEntry{}, err
	}
	w := u.State(time.Now().UnixMilli())
	if err := b.n.st.SetWatch(ctx, member, r, w); err != nil {
		return api.WatchEntry{}, memberErr(err, member)
	}
	return api.WatchEntry{CID: cid, WatchState: w}, nil
}

// WatchOf is member's state of the file (api.Watcher).
func (b *backend) WatchOf(ctx context.Context, member, cid string) (api.WatchEntry, error) {
	r, err := b.n.watchedRoot(ctx, cid)
	if err != nil {
		return api.WatchEntry{}, err
	}
	w, _, err := b.n.st.Watch(ctx, member, r)
	if err != nil {
		return api.WatchEntry{}, memberErr(err, member)
	}
	return api.WatchEntry{CID: cid, WatchState: w}, nil
}

// watched is what member played: each file's root, canonical CID and
// state, the last played first. A file that is gone is left out, and
// forgotten.
type watchedFile struct {
	root store.RootID
	api.WatchEntry
}

func (n *Node) watched(ctx context.Context, member string) ([]watchedFile, error) {
	all, err := n.st.Watching(ctx, member)
	if err != nil {
		return nil, memberErr(err, member)
	}
	roots := make([]store.RootID, 0, len(all))
	for r := range all {
		roots = append(roots, r)
	}
	canon, _, err := n.st.CanonicalCIDs(ctx, roots, nil)
	if err != nil {
		return nil, err
	}
	out := make([]watchedFile, 0, len(roots))
	var gone []store.RootID
	for _, r := range roots {
		c, ok := canon[r]
		if !ok {
			gone = append(gone, r)
			continue
		}
		f := watchedFile{root: r, WatchEntry: api.WatchEntry{CID: c, WatchState: all[r]}}
		if e, ok := n.cat.Entry(r); ok {
			f.File = &e
		}
		out = append(out, f)
	}
	if err := n.st.ForgetWatch(ctx, member, gone); err != nil {
		n.log.Warn("forgetting the watch state of files gone", "member", member, "err", err)
	}
	slices.SortFunc(out, func(a, b watchedFile) int {
		return cmp.Or(cmp.Compare(b.LastPlayed, a.LastPlayed), cmp.Compare(a.CID, b.CID))
	})
	return out, nil
}

// Watching is every file member played (api.Watcher).
func (b *backend) Watching(ctx context.Context, member string) (api.WatchList, error) {
	ws, err := b.n.watched(ctx, member)
	if err != nil {
		return api.WatchList{}, err
	}
	l := api.WatchList{Member: member, Entries: make([]api.WatchEntry, len(ws))}
	for i, w := range ws {
		l.Entries[i] = w.WatchEntry
	}
	return l, nil
}

// Continue is what member is watching, and the episodes that follow the
// last one it finished of each show, where it has not started them
// (api.Watcher).
func (b *backend) Continue(ctx context.Context, member string) (api.ContinueAnswer, error) {
	ws, err := b.n.watched(ctx, member)
	if err != nil {
		return api.ContinueAnswer{}, err
	}
	a := api.ContinueAnswer{Member: member, Next: []api.NextEpisode{}, Entries: []api.WatchEntry{}}
	played := make(map[store.RootID]bool, len(ws))
	for _, w := range ws {
		played[w.root] = true
	}
	shows := map[string]bool{}
	for _, w := range ws {
		if w.InProgress() {
			a.Entries = append(a.Entries, w.WatchEntry)
		}
		if w.File == nil || w.File.Show == "" || shows[w.File.Show] {
			continue
		}
		shows[w.File.Show] = true
		if !w.Watched || len(a.Next) >= maxNextSuggested {
			continue
		}
		if next, e, ok := b.n.cat.NextEpisode(w.root); ok && !played[next] {
			a.Next = append(a.Next, api.NextEpisode{After: w.CID, Episode: e})
		}
	}
	return a, nil
}

// NextEpisode is the episode after cid, with member's state of it
// (api.Watcher).
func (b *backend) NextEpisode(ctx context.Context, member, cid string) (api.NextEpisode, error) {
	r, err := b.n.watchedRoot(ctx, cid)
	if err != nil {
		return api.NextEpisode{}, err
	}
	next, e, ok := b.n.cat.NextEpisode(r)
	if !ok {
		return api.NextEpisode{}, fmt.Errorf("%w: no episode of this household follows %s (not an episode, or its show's last)", api.ErrNotFound, cid)
	}
	w, played, err := b.n.st.Watch(ctx, member, next)
	if err != nil {
		return api.NextEpisode{}, memberErr(err, member)
	}
	after := cid
	if cur, ok := b.n.cat.Entry(r); ok {
		after = cur.CID
	}
	out := api.NextEpisode{After: after, Episode: e}
	if played {
		out.State = &w
	}
	return out, nil
}

var _ api.Watcher = (*backend)(nil)
