package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/metamesh/node/model"
)

// MemberCookie and MemberHeader name the member a browser chose (the
// name URL-escaped, as encodeURIComponent writes it).
const (
	MemberCookie = "metamesh_member"
	MemberHeader = "X-Metamesh-Member"
)

// maxMemberBody bounds the bodies of POST /api/members and PUT
// …/watch/<cid>.
const maxMemberBody = 1 << 10

// Watcher is the part of a Backend that keeps the household's members
// and how far each watched a file; a Backend without it answers 404
// under /api/members. Names are valid (model.CheckMemberName) and CIDs
// parsed. Errors wrap ErrNotFound (no such member, no such file, no next
// episode) or ErrConflict (a member of that name exists).
type Watcher interface {
	// Members are the household's members, sorted.
	Members(ctx context.Context) ([]string, error)
	AddMember(ctx context.Context, name string) error
	RemoveMember(ctx context.Context, name string) error
	// SaveWatch records how far member is in the file cid (u is
	// checked) and answers the state it keeps.
	SaveWatch(ctx context.Context, member, cid string, u WatchUpdate) (WatchEntry, error)
	// WatchOf is member's state of the file cid: a zero state (played
	// never, lastPlayed 0) when it has none.
	WatchOf(ctx context.Context, member, cid string) (WatchEntry, error)
	// Watching is every file member played, the last played first.
	Watching(ctx context.Context, member string) (WatchList, error)
	// Continue is what member is watching and the episodes that follow
	// those finished last.
	Continue(ctx context.Context, member string) (ContinueAnswer, error)
	// NextEpisode is the episode that follows episode cid.
	NextEpisode(ctx context.Context, member, cid string) (NextEpisode, error)
}

// routeMembers registers /api/members and what it holds. Off loopback
// the access rules of every endpoint apply (the token, or an invite's
// cookie); --public-read opens none of it.
func (s *Server) routeMembers() {
	s.mux.HandleFunc("GET /api/members", s.withWatcher(s.members))
	s.mux.HandleFunc("POST /api/members", s.withWatcher(s.addMember))
	s.mux.HandleFunc("DELETE /api/members/{name}", s.withWatcher(s.removeMember))
	s.mux.HandleFunc("GET /api/members/{name}/watch", s.withWatcher(s.watching))
	s.mux.HandleFunc("GET /api/members/{name}/watch/{cid}", s.withWatcher(s.watchOf))
	s.mux.HandleFunc("PUT /api/members/{name}/watch/{cid}", s.withWatcher(s.saveWatch))
	s.mux.HandleFunc("GET /api/members/{name}/continue", s.withWatcher(s.continueWatching))
	s.mux.HandleFunc("GET /api/members/{name}/next/{cid}", s.withWatcher(s.nextEpisode))
}

type watcherHandler func(Watcher, http.ResponseWriter, *http.Request)

// withWatcher answers 404 for a Backend that keeps no members, and a
// query parameter with 400.
func (s *Server) withWatcher(h watcherHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		wb, ok := s.b.(Watcher)
		if !ok {
			writeErrorCode(w, http.StatusNotFound, "this node keeps no members")
			return
		}
		if err := onlyParams(r.URL.Query()); err != nil {
			writeError(w, err)
			return
		}
		h(wb, w, r)
	}
}

// ChosenMember is the member name a request says its browser chose (the
// header first, then the cookie), "" for none or one that is no valid
// name.
func ChosenMember(r *http.Request) string {
	v := r.Header.Get(MemberHeader)
	if v == "" {
		if c, err := r.Cookie(MemberCookie); err == nil {
			v = c.Value
		}
	}
	name, err := url.PathUnescape(v)
	if err != nil || model.CheckMemberName(name) != nil {
		return ""
	}
	return name
}

func (s *Server) members(wb Watcher, w http.ResponseWriter, r *http.Request) {
	ms, err := wb.Members(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	a := MembersAnswer{Members: ms}
	if c := ChosenMember(r); c != "" && slices.Contains(ms, c) {
		a.Current = c
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) addMember(wb Watcher, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name *string `json:"name"`
	}
	if err := readJSONBody(r, &body, `{"name": "…"}`); err != nil {
		writeError(w, err)
		return
	}
	if body.Name == nil {
		writeError(w, badRequest(`the body has no "name": want {"name": "…"}`))
		return
	}
	if err := model.CheckMemberName(*body.Name); err != nil {
		writeError(w, err)
		return
	}
	if err := wb.AddMember(r.Context(), *body.Name); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"name": *body.Name})
}

// memberName is the path's member name, checked.
func memberName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	return name, model.CheckMemberName(name)
}

func (s *Server) removeMember(wb Watcher, w http.ResponseWriter, r *http.Request) {
	name, err := memberName(r)
	if err == nil {
		err = wb.RemoveMember(r.Context(), name)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"removed": name})
}

func (s *Server) watching(wb Watcher, w http.ResponseWriter, r *http.Request) {
	answer(w, r, func(ctx context.Context, name string) (WatchList, error) { return wb.Watching(ctx, name) })
}

func (s *Server) continueWatching(wb Watcher, w http.ResponseWriter, r *http.Request) {
	answer(w, r, wb.Continue)
}

func (s *Server) watchOf(wb Watcher, w http.ResponseWriter, r *http.Request) {
	answerCID(w, r, wb.WatchOf)
}

func (s *Server) nextEpisode(wb Watcher, w http.ResponseWriter, r *http.Request) {
	answerCID(w, r, wb.NextEpisode)
}

func (s *Server) saveWatch(wb Watcher, w http.ResponseWriter, r *http.Request) {
	var u struct {
		Position *float64 `json:"position"`
		Duration *float64 `json:"duration"`
		Watched  bool     `json:"watched"`
	}
	if err := readJSONBody(r, &u, `{"position": seconds, "duration": seconds, "watched": bool}`); err != nil {
		writeError(w, err)
		return
	}
	if u.Position == nil || u.Duration == nil {
		writeError(w, badRequest(`the body needs "position" and "duration", in seconds`))
		return
	}
	up := WatchUpdate{Position: *u.Position, Duration: *u.Duration, Watched: u.Watched}
	if err := up.Check(); err != nil {
		writeError(w, err)
		return
	}
	answerCID(w, r, func(ctx context.Context, name, c string) (WatchEntry, error) { return wb.SaveWatch(ctx, name, c, up) })
}

// answer writes what f answers for the path's member.
func answer[T any](w http.ResponseWriter, r *http.Request, f func(context.Context, string) (T, error)) {
	name, err := memberName(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := f(r.Context(), name)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// answerCID writes what f answers for the path's member and CID.
func answerCID[T any](w http.ResponseWriter, r *http.Request, f func(context.Context, string, string) (T, error)) {
	answer(w, r, func(ctx context.Context, name string) (T, error) {
		c, err := ParseCID(r.PathValue("cid"))
		if err != nil {
			var zero T
			return zero, err
		}
		return f(ctx, name, c)
	})
}

// readJSONBody decodes a small JSON object body into v, refusing
// unknown members, a second value and a body past maxMemberBody; want
// shows the body's shape in the error.
func readJSONBody(r *http.Request, v any, want string) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxMemberBody+1))
	if err != nil {
		return badRequest("reading the body: %v", err)
	}
	if len(b) > maxMemberBody {
		return fmt.Errorf("%w: a body of more than %d bytes", ErrTooLarge, maxMemberBody)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("the body is empty: want %s", want)
		}
		return badRequest("the body is not %s: %v", want, err)
	}
	if dec.More() {
		return badRequest("the body is more than one JSON value")
	}
	return nil
}
