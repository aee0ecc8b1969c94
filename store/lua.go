package store

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts are the files of lua/, embedded. Each file begins with
// what its ARGV and its reply are; here every script has one Go type for
// its arguments (argv, in the documented order) and one decoder of its
// reply, and a call site passes the one and gets the other's value.
// Scripts take no KEYS: keys are built inside them (the node talks to a
// single, non-clustered Redis).
//
// A write script's file is the body of a function main, composed as
//
//	<lua/prelude.lua> local function main() <body> end
//	local res = main() ksflush() return res
//
// and takes the event cap and timestamp (Store.evArgs) as its two last
// ARGV, appended by run. A read script is its body after common.lua
// (whose docfor reads a document), as a bare script is; it writes
// nothing and takes no event arguments.
//
//go:embed lua/*.lua
var luaFS embed.FS

// The preludes: no script variable is made of them.
const (
	luaCommonFile  = "common.lua"
	luaPreludeFile = "prelude.lua"
)

// luaKind says what a script file is composed with.
type luaKind int

const (
	luaWrite luaKind = iota // prelude, body as main, ksflush; evmax and ts appended
	luaRead                 // the body: writes nothing, takes no event arguments
	luaBare                 // the body alone
)

// luaUses records the kinds each script file was made into, one entry per
// script variable (lua_test.go checks there is exactly one).
var luaUses = map[string][]luaKind{}

// luaFile reads an embedded file of lua/.
func luaFile(name string) string {
	b, err := luaFS.ReadFile("lua/" + name)
	if err != nil {
		panic("store: " + err.Error())
	}
	return string(b)
}

// luaSource composes the script file name as kind.
func luaSource(kind luaKind, name string) string {
	body, common := luaFile(name), luaFieldCodes()+luaFile(luaCommonFile)
	switch kind {
	case luaWrite:
		return common + luaFile(luaPreludeFile) + "local function main()\n" + body + "\nend\nlocal res = main()\nksflush()\nreturn res\n"
	}
	return common + body
}

// luaArgs is a script's argument type: argv is its ARGV, in the order
// the script's file documents (without a write script's evmax and ts).
type luaArgs interface{ argv() []any }

// luaScript is one script: its arguments A, its reply decoded as R.
type luaScript[A luaArgs, R any] struct {
	kind   luaKind
	op     string // in errors: "store: <op>: …"; "" for "store: …"
	sc     *redis.Script
	decode func(*redis.Cmd) (R, error)
}

func newScript[A luaArgs, R any](kind luaKind, file, op string, decode func(*redis.Cmd) (R, error)) *luaScript[A, R] {
	luaUses[file] = append(luaUses[file], kind)
	return &luaScript[A, R]{kind: kind, op: op, sc: redis.NewScript(luaSource(kind, file)), decode: decode}
}

// args is the whole ARGV of a call: a's, then for a write script the event
// cap and timestamp.
func (l *luaScript[A, R]) args(s *Store, a A) []any {
	v := a.argv()
	if l.kind == luaWrite {
		v = append(v, s.evArgs()...)
	}
	return v
}

// run runs the script with a and decodes its reply. Errors (redis.Nil for
// a nil reply among them) are wrapped with the script's op.
func (l *luaScript[A, R]) run(ctx context.Context, s *Store, a A) (R, error) {
	if l.kind == luaWrite {
		// Even a failed script may have written part of its work.
		defer s.cache.wrote()
	}
	r, err := l.decode(l.sc.Run(ctx, s.rdb, nil, l.args(s, a)...))
	switch {
	case err == nil:
		return r, nil
	case l.op == "":
		return r, fmt.Errorf("store: %w", err)
	}
	return r, fmt.Errorf("store: %s: %w", l.op, err)
}

// The scripts.
var (
	luaArrive        = newScript[arriveArgs](luaWrite, "arrive.lua", "", decodeArrive)
	luaConfirm       = newScript[confirmArgs](luaWrite, "confirm.lua", "", decodeOutcome)
	luaChange        = newScript[changeArgs](luaWrite, "change.lua", "", decodeOutcome)
	luaIngest        = newScript[ingestArgs](luaWrite, "ingest.lua", "", decodeCounted)
	luaIngestMany    = newScript[ingestManyArgs](luaWrite, "ingestmany.lua", "", decodeCountedList)
	luaExtracted     = newScript[extractedArgs](luaWrite, "extracted.lua", "", decodeCounted)
	luaRemove        = newScript[removeArgs](luaWrite, "remove.lua", "", decodeOutcome)
	luaRename        = newScript[renameArgs](luaWrite, "rename.lua", "", decodeOutcome)
	luaMint          = newScript[mintArgs](luaWrite, "mint.lua", "", decodeOutcome)
	luaAddAlias      = newScript[addAliasArgs](luaWrite, "addalias.lua", "", decodeOutcome)
	luaTrack         = newScript[trackArgs](luaWrite, "track.lua", "track fields", decodeTrack)
	luaDeleteRoot    = newScript[deleteRootArgs](luaWrite, "deleteroot.lua", "", decodeOutcome)
	luaSetFields     = newScript[setFieldsArgs](luaWrite, "setfields.lua", "set fields", decodeSetFields)
	luaEdit          = newScript[editArgs](luaWrite, "edit.lua", "edit", decodeEdit)
	luaStill         = newScript[stillArgs](luaWrite, "still.lua", "link still", decodeStill)
	luaMergeRecord   = newScript[mergeRecordArgs](luaWrite, "mergerecord.lua", "merge record", decodeMerge)
	luaRepairPaths   = newScript[rootsArgs](luaBare, "repairpaths.lua", "repair paths", decodeUpgrade)
	luaPath          = newScript[pathArgs](luaRead, "path.lua", "", decodePath)
	luaDocument      = newScript[documentArgs](luaRead, "document.lua", "read document", decodeDocument)
	luaDocumentByCID = newScript[documentByCIDArgs](luaRead, "documentbycid.lua", "read document", decodeDocumentByCID)
)

// Arguments.

// statArgs are a path's arguments: path, size, mtime, dev, ino, link.
// link is "1" for a symbolic link, "h" for a file that has (or may have:
// Nlink unknown) other hard links, "" for a file's only name; the path
// record keeps it, and the scripts index the inode of "1" and "h" alone.
func statArgs(f FileStat) []any {
	dev, ino, link := "", "", ""
	if f.Dev != 0 || f.Ino != 0 {
		dev, ino = strconv.FormatUint(f.Dev, 10), strconv.FormatUint(f.Ino, 10)
	}
	switch {
	case f.Link:
		link = "1"
	case f.Nlink != 1 && dev != "":
		link = "h"
	}
	return []any{f.Path, strconv.FormatInt(f.Size, 10), strconv.FormatInt(f.MtimeNs, 10), dev, ino, link}
}

// hashArgs are a full pass's arguments: midhash, sha, ipfs.
func hashArgs(h Hashes) []any { return []any{h.Midhash, h.SHA256, h.IPFS} }

// arriveArgs: arrive.lua.
type arriveArgs struct {
	newRoot RootID // minted when no local root holds the midhash
	file    FileStat
	midhash string
}

func (a arriveArgs) argv() []any {
	v := append([]any{string(a.newRoot)}, statArgs(a.file)...)
	return append(v, a.midhash)
}

// confirmArgs: confirm.lua.
type confirmArgs struct {
	file   FileStat
	hashes Hashes
	// splitRoot takes a duplicate split off by a midhash collision;
	// leaveRoot a primary whose bytes disagree with its root's confirmed
	// duplicates.
	splitRoot, leaveRoot RootID
}

func (a confirmArgs) argv() []any {
	v := append(statArgs(a.file), hashArgs(a.hashes)...)
	return append(v, string(a.splitRoot), string(a.leaveRoot))
}

// changeArgs: change.lua.
type changeArgs struct {
	file   FileStat
	hashes Hashes
	// arriveRoot is minted for new content no root holds; splitRoot and
	// leaveRoot are confirmArgs'.
	arriveRoot, splitRoot, leaveRoot RootID
	// meta is written when the path ends up a primary; none without
	// withMeta.
	meta     extractedMeta
	withMeta bool
}

func (a changeArgs) argv() []any {
	v := append(statArgs(a.file), hashArgs(a.hashes)...)
	v = append(v, string(a.arriveRoot), string(a.splitRoot), string(a.leaveRoot))
	if a.withMeta {
		v = append(v, a.meta.argv()...)
	}
	return v
}

// extractedMeta is a Meta whose field names were checked (Meta.check):
// extracted's arguments.
type extractedMeta struct {
	version int
	refresh bool // written even when not newer (Meta.Refresh)
	owned   []string
	names   []string // sorted
	fields  map[string]string
}

// check checks m's field names.
func (m Meta) check() (extractedMeta, error) {
	names := make([]string, 0, len(m.Fields))
	for f := range m.Fields {
		if err := ValidField(f); err != nil {
			return extractedMeta{}, err
		}
		names = append(names, f)
	}
	sort.Strings(names)
	return extractedMeta{version: m.Version, refresh: m.Refresh, owned: m.Owned, names: names, fields: m.Fields}, nil
}

// argv: version, #owned, owned…, field, value, ….
func (m extractedMeta) argv() []any {
	version := strconv.Itoa(m.version)
	if m.refresh {
		version = "=" + version
	}
	v := []any{version, len(m.owned)}
	for _, o := range m.owned {
		v = append(v, o)
	}
	for _, f := range m.names {
		v = append(v, f, m.fields[f])
	}
	return v
}

// ingestArgs: ingest.lua, and one file of ingestmany.lua.
type ingestArgs struct {
	arriveRoot, splitRoot, leaveRoot RootID // as changeArgs'
	file                             FileStat
	hashes                           Hashes
	meta                             extractedMeta
}

func (a ingestArgs) argv() []any {
	v := []any{string(a.arriveRoot), string(a.splitRoot), string(a.leaveRoot)}
	v = append(append(v, statArgs(a.file)...), hashArgs(a.hashes)...)
	return append(v, a.meta.argv()...)
}

// ingestManyArgs: ingestmany.lua.
type ingestManyArgs []ingestArgs

func (a ingestManyArgs) argv() []any {
	var v []any
	for _, one := range a {
		args := one.argv()
		v = append(append(v, len(args)), args...)
	}
	return v
}

// extractedArgs: extracted.lua.
type extractedArgs struct {
	path string
	meta extractedMeta
}

func (a extractedArgs) argv() []any { return append([]any{a.path}, a.meta.argv()...) }

// removeArgs: remove.lua.
type removeArgs struct {
	path  string
	event string // the event type emitted for path; "" for none
}

func (a removeArgs) argv() []any { return []any{a.path, a.event} }

// renameArgs: rename.lua.
type renameArgs struct {
	oldPath, newPath string
	replace          bool // a known newPath is released
}

func (a renameArgs) argv() []any {
	replace := ""
	if a.replace {
		replace = "1"
	}
	return []any{a.oldPath, a.newPath, replace}
}

// mintArgs: mint.lua.
type mintArgs struct {
	root RootID
	file FileStat // path, size and mtime
}

func (a mintArgs) argv() []any {
	return []any{string(a.root), a.file.Path, strconv.FormatInt(a.file.Size, 10), strconv.FormatInt(a.file.MtimeNs, 10)}
}

// addAliasArgs: addalias.lua.
type addAliasArgs struct {
	root RootID
	cid  string
}

func (a addAliasArgs) argv() []any { return []any{string(a.root), a.cid} }

// trackArgs: track.lua.
type trackArgs struct {
	deleteOrphans bool
	keys          []string // file:<root>/<field>
}

func (a trackArgs) argv() []any {
	v := []any{"0"}
	if a.deleteOrphans {
		v[0] = "1"
	}
	for _, k := range a.keys {
		v = append(v, k)
	}
	return v
}

// deleteRootArgs: deleteroot.lua.
type deleteRootArgs struct{ root RootID }

func (a deleteRootArgs) argv() []any { return []any{string(a.root)} }

// setFieldsArgs: setfields.lua.
type setFieldsArgs struct {
	root   RootID
	names  []string // checked, sorted
	fields map[string]string
}

func (a setFieldsArgs) argv() []any {
	v := []any{string(a.root)}
	for _, f := range a.names {
		v = append(v, f, a.fields[f])
	}
	return v
}

// stillArgs: still.lua.
type stillArgs struct {
	root RootID
	cid  string // "" drops the link
}

func (a stillArgs) argv() []any { return []any{string(a.root), a.cid} }

// mergeRecordArgs: mergerecord.lua.
type mergeRecordArgs struct {
	peer    string
	newRoot RootID // minted when the record belongs to no root
	cap     int64  // Options.PeerRootsMax
	// strong and weak are the members, names the field names (checked,
	// sorted) of meta.
	strong, weak, names []string
	meta                map[string]string
}

func (a mergeRecordArgs) argv() []any {
	v := []any{a.peer, string(a.newRoot), a.cap, MaxDuplicates, len(a.strong)}
	for _, c := range a.strong {
		v = append(v, c)
	}
	v = append(v, len(a.weak))
	for _, c := range a.weak {
		v = append(v, c)
	}
	v = append(v, len(a.names))
	for _, f := range a.names {
		v = append(v, f, a.meta[f])
	}
	return v
}

// pathArgs: path.lua.
// rootsArgs are some roots.
type rootsArgs []RootID

func (a rootsArgs) argv() []any {
	v := make([]any, len(a))
	for i, r := range a {
		v[i] = string(r)
	}
	return v
}

type pathArgs struct{ path string }

func (a pathArgs) argv() []any { return []any{a.path} }

// documentArgs: document.lua.
type documentArgs struct {
	root          RootID
	maxDuplicates int
}

func (a documentArgs) argv() []any { return []any{string(a.root), a.maxDuplicates} }

// documentByCIDArgs: documentbycid.lua.
type documentByCIDArgs struct {
	cid           string
	maxDuplicates int
}

func (a documentByCIDArgs) argv() []any { return []any{a.cid, a.maxDuplicates} }

// Replies.

// decodeOutcome: {kind, root[, path]}.
func decodeOutcome(cmd *redis.Cmd) (Outcome, error) {
	v, err := cmd.StringSlice()
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Kind: Kind(v[0])}
	if len(v) > 1 {
		o.Root = RootID(v[1])
	}
	if len(v) > 2 {
		o.Path = v[2]
	}
	return o, nil
}

// counted is an outcome with the number of metadata fields written.
type counted struct {
	Outcome
	written int
}

// decodeCounted: {kind, root, fields written}.
func decodeCounted(cmd *redis.Cmd) (counted, error) {
	v, err := cmd.Slice()
	if err != nil {
		return counted{}, err
	}
	return countedAt(v, 0), nil
}

// decodeCountedList: decodeCounted's triples one after the other.
func decodeCountedList(cmd *redis.Cmd) ([]counted, error) {
	v, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	out := make([]counted, 0, len(v)/3)
	for k := 0; k+2 < len(v); k += 3 {
		out = append(out, countedAt(v, k))
	}
	return out, nil
}

func countedAt(v []any, k int) counted {
	kind, _ := v[k].(string)
	root, _ := v[k+1].(string)
	n, _ := v[k+2].(int64)
	return counted{Outcome: Outcome{Kind: Kind(kind), Root: RootID(root)}, written: int(n)}
}

// decodeTrack: {listed, unlisted, deleted}.
func decodeTrack(cmd *redis.Cmd) (RepairReport, error) {
	v, err := cmd.Int64Slice()
	if err != nil {
		return RepairReport{}, err
	}
	return RepairReport{Listed: int(v[0]), Unlisted: int(v[1]), Deleted: int(v[2])}, nil
}

// decodeSetFields: the number of fields written, -1 for an unknown root.
func decodeSetFields(cmd *redis.Cmd) (int, error) { return cmd.Int() }

// decodeStill: 1 changed, 0 not, -1 not a local root.
func decodeStill(cmd *redis.Cmd) (int, error) { return cmd.Int() }

// decodeMerge: kind, root, written, local, then three counted lists
// (conflicting, folded, evicted).
func decodeMerge(cmd *redis.Cmd) (MergeResult, error) {
	all, err := cmd.Slice()
	if err != nil {
		return MergeResult{}, err
	}
	var v []string
	var doc []any
	for i, x := range all {
		switch x := x.(type) {
		case string:
			v = append(v, x)
		case []any:
			if i == len(all)-1 {
				doc = x
			}
		}
	}
	if len(v) < 7 {
		return MergeResult{}, fmt.Errorf("store: merge record answered %q", v)
	}
	res := MergeResult{Root: RootID(v[1]), Written: v[2] == "1", Local: v[3] == "1"}
	if doc != nil {
		res.Document = readDocument(res.Root, doc)
	}
	res.Minted = v[0] == "minted"
	res.Conflict = v[0] == "conflict"
	k := 4
	lists := []*[]RootID{&res.Conflicting, &res.Folded, &res.Evicted}
	for _, l := range lists {
		var n int
		fmt.Sscan(v[k], &n)
		for _, r := range v[k+1 : k+1+n] {
			*l = append(*l, RootID(r))
		}
		k += n + 1
	}
	sort.Slice(res.Conflicting, func(i, j int) bool { return res.Conflicting[i] < res.Conflicting[j] })
	return res, nil
}

// decodeArrive: decodeOutcome's {kind, root}, then for KindExists the
// path's state (Outcome.State).
func decodeArrive(cmd *redis.Cmd) (Outcome, error) {
	v, err := cmd.StringSlice()
	if err != nil {
		return Outcome{}, err
	}
	if len(v) < 2 {
		return Outcome{}, fmt.Errorf("store: arrive answered %q", v)
	}
	o := Outcome{Kind: Kind(v[0]), Root: RootID(v[1])}
	if o.Kind == KindExists && len(v) >= 12 {
		o.State = pathState(v[2:])
	}
	return o, nil
}

// decodePath: the path's state (pathState); redis.Nil when unknown.
func decodePath(cmd *redis.Cmd) (PathState, error) {
	v, err := cmd.StringSlice()
	if err != nil {
		return PathState{}, err
	}
	return pathState(v), nil
}

// decodeDocument: docfor's answer, without Root (the caller knows it);
// redis.Nil when the root is not indexed.
func decodeDocument(cmd *redis.Cmd) (Document, error) {
	v, err := cmd.Slice()
	if err != nil {
		return Document{}, err
	}
	return readDocument("", v), nil
}

// decodeDocumentByCID: the root, then docfor's answer; redis.Nil when no
// root holds the CID.
func decodeDocumentByCID(cmd *redis.Cmd) (Document, error) {
	v, err := cmd.Slice()
	if err != nil {
		return Document{}, err
	}
	root, _ := v[0].(string)
	return readDocument(RootID(root), v[1:]), nil
}
