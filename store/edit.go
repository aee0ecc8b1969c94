package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// The caps of an edit: a field name and value, and how many fields one
// edit writes.
const (
	MaxEditKey    = 512
	MaxEditValue  = 64 << 10
	MaxEditFields = 256
)

// ValidEditField checks a field the household may edit: a valid field
// name (ValidField: not one of the schema's own, filePath, sizeByte,
// mtime, duplicates, cids/…), not what peers said (origin/…), not the
// node's still of a video (StillField: SetStill writes it), at most
// MaxEditKey bytes of UTF-8 without spaces or control characters (the
// change feed lists edited fields space-separated).
func ValidEditField(f string) error {
	if err := ValidField(f); err != nil {
		return err
	}
	first, _, _ := strings.Cut(f, "/")
	switch {
	case first == "origin":
		return fmt.Errorf("store: field %q: what peers said of a file is theirs: %w", f, ErrReservedField)
	case f == FromNameField:
		return fmt.Errorf("store: field %q: the node's own, what the file's name gave: %w", f, ErrReservedField)
	case first == StillField:
		return fmt.Errorf("store: field %q: the frame the node took from the video is the node's own: %w", f, ErrReservedField)
	case len(f) > MaxEditKey:
		return fmt.Errorf("store: field of %d bytes, at most %d: %w", len(f), MaxEditKey, ErrTooLarge)
	case !utf8.ValidString(f) || strings.ContainsFunc(f, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return fmt.Errorf("store: field %q: not UTF-8, or with a space or a control character: %w", f, ErrInvalidField)
	}
	return nil
}

// Edit writes the household's own values of a local file's fields, the
// file found by any CID of its key-set, in one script: every field of set
// becomes an edit (Document.Edited), which no rescan, NFO change or new
// extraction overwrites; every field of del loses its edit, and what the
// file's name or NFO says comes back (or, not an edit, is deleted).
// Returns the root and the fields whose values changed, sorted; the
// change feed gets a "change" entry naming them (Event.Keys). A CID no
// root holds is ErrNotFound; a file known only from peers is ErrNotLocal.
func (s *Store) Edit(ctx context.Context, cid string, set map[string]string, del []string) (RootID, []string, error) {
	if len(set)+len(del) > MaxEditFields {
		return "", nil, fmt.Errorf("store: an edit of %d fields, at most %d: %w", len(set)+len(del), MaxEditFields, ErrTooLarge)
	}
	a := editArgs{cid: cid, set: set}
	for f, v := range set {
		if err := ValidEditField(f); err != nil {
			return "", nil, err
		}
		if len(v) > MaxEditValue {
			return "", nil, fmt.Errorf("store: field %q: a value of %d bytes, at most %d: %w", f, len(v), MaxEditValue, ErrTooLarge)
		}
		a.names = append(a.names, f)
	}
	for _, f := range del {
		if err := ValidEditField(f); err != nil {
			return "", nil, err
		}
		if _, ok := set[f]; ok {
			return "", nil, fmt.Errorf("store: field %q both set and deleted: %w", f, ErrInvalidField)
		}
		a.del = append(a.del, f)
	}
	sort.Strings(a.names)
	sort.Strings(a.del)
	res, err := luaEdit.run(ctx, s, a)
	if err != nil {
		return "", nil, err
	}
	switch res.kind {
	case "notfound":
		return "", nil, fmt.Errorf("store: no file with CID %s: %w", cid, ErrNotFound)
	case "notlocal":
		return res.root, nil, fmt.Errorf("store: CID %s: %w", cid, ErrNotLocal)
	}
	sort.Strings(res.changed)
	return res.root, res.changed, nil
}

// editArgs: edit.lua.
type editArgs struct {
	cid        string
	names, del []string // checked, sorted
	set        map[string]string
}

func (a editArgs) argv() []any {
	v := []any{a.cid, len(a.names)}
	for _, f := range a.names {
		v = append(v, f, a.set[f])
	}
	v = append(v, len(a.del))
	for _, f := range a.del {
		v = append(v, f)
	}
	return v
}

// editResult is edit.lua's answer.
type editResult struct {
	kind    string
	root    RootID
	changed []string
}

// decodeEdit: kind, root, then the fields that changed.
func decodeEdit(cmd *redis.Cmd) (editResult, error) {
	v, err := cmd.StringSlice()
	if err != nil || len(v) < 2 {
		return editResult{}, fmt.Errorf("edit: answer %v: %w", v, err)
	}
	return editResult{kind: v[0], root: RootID(v[1]), changed: v[2:]}, nil
}
