// Package store owns the Redis schema of a MetaMesh node and every
// operation on it, and the managed redis-server child process. It is the
// only package that imports go-redis; it knows nothing of libp2p or HTTP.
//
// # Schema
//
// Everything is a flat key. File properties are STRING keys so keyspace
// notifications fire per field.
//
//	file:<root>/<property…>   STRING  open, flat metadata (title, fileinfo/duration, …)
//	file:<root>/filePath      STRING  primary absolute path (local roots only)
//	file:<root>/sizeByte      STRING  size in bytes
//	file:<root>/mtime         STRING  mtime in Unix nanoseconds
//	file:<root>/cids/<cid>    STRING  "true": the key-set, one key per known CID
//	file:<root>/duplicates    SET     other local paths with the same content
//	cid:<cid>                 STRING  → root: the reverse index, O(1) lookups
//	file:__index__            SET     every root
//	meta:events               STREAM  path lifecycle and key-set changes (MAXLEN ~ 10,000
//	                                  by default; see below)
//
// Keys this node adds where the reference schema leaves gaps (layout 3;
// version.go, upgrade.go):
//
//	meta:layout               STRING  the layout version ("3"); Open refuses a newer
//	                                  one and upgrades an older one in place
//	meta:upgrade              HASH    to, cursor: an upgrade under way (resumed
//	                                  by the next Open after a crash)
//	meta:import               STRING  JSON {sha256, mode, started}: a snapshot
//	                                  import under way (snapshot_import.go);
//	                                  running it again finishes it
//	fields:<root>             HASH    every STRING field of the root, so a document
//	                                  is read and a root deleted in O(fields), never
//	                                  by SCAN: <name> → "" for a field, /<cid> for
//	                                  the key-set member cids/<cid> → which of the
//	                                  root's own digests it is: m (midhash), s
//	                                  (sha2-256), i (IPFS CID), "si" for a small
//	                                  file, "" for none (lua/common.lua). The
//	                                  own digests are the digests of the root's
//	                                  own confirmed bytes (sha and ipfs only once
//	                                  its primary, or a duplicate promoted
//	                                  after confirmation, was hashed); what the
//	                                  node may announce for the root (layout 1
//	                                  kept them in own:<root>). Entries fit Redis' default listpack limits
//	                                  (64 bytes, 128 entries), so a root's index
//	                                  stays a listpack
//	path:__index__            ZSET    every local path, once (score 0): a member
//	                                  is the path, a NUL byte, then its state,
//	                                  these values joined by spaces: root, size,
//	                                  mtime (ns), mid (midhash256), hashed ("1"
//	                                  once the full pass is applied), dev and
//	                                  ino (the file's identity: hard links and
//	                                  moves), link ("1" for a symlink, "h" for a
//	                                  file that has or may have other hard
//	                                  links, "" for a file's only name), xv (the
//	                                  extraction version last applied as a
//	                                  primary). A path's member is found from
//	                                  "<path>\x00" by ZRANGEBYLEX (O(log N)), and
//	                                  a directory's paths are a lexicographic
//	                                  range (renames and deletes of whole
//	                                  directories, a video's sidecars): restart
//	                                  reconciliation without re-hashing. Layouts
//	                                  before 3 kept the state in a hash
//	                                  path:<path> and the path again here
//	inode:<dev>:<ino>         SET     the known paths of one file, kept only for
//	                                  an inode that may have another known name:
//	                                  a symbolic link's target, a file with hard
//	                                  links (path link "h": nlink above 1, or not
//	                                  known). A file's only name is left out, and
//	                                  joins when a second name arrives
//	supplied:<root>           SET     key-set members not computed from the
//	                                  node's own bytes (AddAlias, outside
//	                                  writers, later peers); never confirm a
//	                                  duplicate, never count as own digests
//	learned:<root>            HASH    member → the peers (sorted, space-
//	                                  separated) whose records carried it:
//	                                  the members of supplied:<root> that the
//	                                  root holds only because peers said so.
//	                                  The node vouches for every other member
//	                                  (computed from its bytes, or supplied
//	                                  locally: AddAlias, an outside writer);
//	                                  a local root elects its canonical CID
//	                                  from those and signs only those
//	edited:<root>             SET     the fields whose values are the
//	                                  household's edits (Edit): no
//	                                  extraction writes them
//	extracted:<root>          HASH    field → what the extractors gave for
//	                                  an edited field (its value before the
//	                                  edit, then every later extraction's),
//	                                  written back when the edit is dropped
//	cidalt:<cid>              SET     other roots whose key-set holds <cid> while
//	                                  cid:<cid> points elsewhere (an ambiguous
//	                                  midhash after a collision); when the holder
//	                                  goes, the alias passes to one of them
//	peers:<root>              SET     peer IDs that supplied members or fields of
//	                                  the root (MergeRecord)
//	peerroots                 ZSET    roots known only from peers (no filePath),
//	                                  scored by the Unix ms of the last merge that
//	                                  wrote to them; the least recent are evicted
//	                                  beyond Options.PeerRootsMax. A root that
//	                                  became local leaves it at the next merge
//	conflicts:<root>          SET     "<peer> <otherRoot>": a peer's record linked
//	                                  this local root and another one through
//	                                  strong digests; nothing of it was merged
//	file:<root>/origin/<peer>/<field>
//	                          STRING  what a peer said about the root; never
//	                                  written over the root's own fields
//
// Roots known only from peers carry no filePath, sizeByte, mtime,
// duplicates or own:<root> (so they are never announced); every member
// they hold is in supplied:<root> and learned:<root>, so when a local
// file's bytes confirm into one, the peers' members stay supplied and
// learned, and only what the node computed is vouched for. merge.go
// states the merge rule (MergeRecord).
//
// # Provenance
//
// A root's members have three sources: the node's own bytes (own:<root>),
// the household (AddAlias, an outside writer's
// file:<root>/cids/<cid>), and peers' records (MergeRecord). The first two
// are vouched for; a member whose only source is peers is learned, listed
// in learned:<root> with every peer that sent it. Computing a member or
// supplying it locally vouches for it (it leaves learned:); folding a root
// into another carries its learned members with their peers, and what
// either vouched for stays vouched. Document.Vouched is what a local
// root's canonical CID is elected from and what its signed record and
// search hits carry, so no sequence of peers' records renames a
// household's file or travels on under its signature. A root known only
// from peers elects from every member. A store written before learned:
// existed held none; the upgrade to layout 3 records what peers may have
// supplied there as learned (below, Layouts and upgrades).
//
// A local root's strong members (rank >= 30) that are not supplied are
// exactly its own sha and ipfs: promoting a duplicate whose bytes were not
// confirmed drops them until it is confirmed, and a primary whose bytes
// disagree with its root's confirmed duplicates leaves the root. Check
// verifies it (at most one sha2-256 and one dag-pb among the computed
// members).
//
// Roots are UUIDv7 in 26-character Crockford base32 (rootid.go). CIDs are
// always in canonical string form (protocol.ParseStrict); the canonical CID
// of a root is derived on read (Document.CanonicalCID), never stored.
//
// # Atomicity
//
// Every multi-key change (arrive, confirm, change, remove/promote/delete,
// rename, alias, merge, ingest) is one Lua script (lua/), so no reader
// sees it half done and two concurrent arrivals of the same content end as
// one root plus one duplicate. Reading a document by CID is one script too.
//
// # The change feed
//
// Every script appends to meta:events in the same script: path lifecycle
// entries (type add | change | delete | rename | reset; path, midhash256,
// oldPath) and one key-set entry per root whose key-set or local paths it
// changed (type mint | confirm | split | merge | alias | promote | purge;
// root, added and removed as space-separated CIDs, path, into for a
// merge), net of members added and removed again. An add that minted a
// root carries root and added itself. Every entry has timestamp (Unix ms).
// The rank ladder is not in Lua: consumers derive canonical CIDs from the
// key-sets they rebuild. Feed reads the stream in order from a stream ID
// and reports ErrFeedTrimmed when the cap dropped entries after it.
//
// # The open schema
//
// Other programs may SET, DEL or EXPIRE STRING keys file:<root>/<name> of
// an indexed root. Changes (run by the node) tracks them from keyspace
// notifications (classes K$gx, which Open sets on every connection);
// Repair (fsck --repair) rebuilds the field index, the supplied members and
// the path index from the keys for writes made while no node ran, and can
// delete keys of roots that no longer exist.
//
// # For other Go programs
//
// Besides what the node calls, the store exports, deliberately, the
// operations the upstream design gives other programs on the same Redis:
// the seeds' five storage operations, Mint (a root for a file or a bare
// record), AddAlias (a CID supplied for a root), GetByCID (any CID to its
// root in O(1)), MergeIfAliasExists (fold a new root into the one that
// already holds a strong CID) and DeleteRoot (a root with every member);
// the two-pass lifecycle a program that hashes files itself drives, Arrive
// (the midhash, at once) and Confirm (the full digests, later; the node's
// ingest does both in one Ingest); and SetFields, the open schema's
// write. Their tests are the store's own (lifecycle_test.go and
// search_test.go among them) and the node's tests that play another
// writer. Names only tests call live in export_test.go.
//
// # Files
//
//   - store.go: Open, Close, options, key names.
//   - server.go: the supervised redis-server (append-only persistence,
//     restart on exit, clean shutdown; an append-only file it refuses is
//     an AOFDamagedError naming the redis-check-aof command to run, and
//     is never moved or deleted).
//   - lua/*.lua: the Lua scripts, one file each, beginning with its ARGV
//     and its reply; common.lua (what every script shares, docfor
//     among it: a root's document) and prelude.lua (the helpers of the
//     write scripts).
//   - lua.go: embeds lua/ and composes each script with its prelude; one
//     argument type (argv) and one reply decoder per script.
//   - ops.go: lifecycle and seed operations (Arrive, Confirm, Change,
//     RemovePath, Replace, Mint, AddAlias, GetByCID, DeleteRoot, RootIDs,
//     Own, Announced, AnnouncedMany, and Hashes.Canonical: the one
//     choice of the CID a file is announced and named by).
//   - fields.go: metadata writes (SetFields, SetExtracted, SetStill: a
//     video's still, StillField) and whole-file
//     ingestion (Ingest, IngestBatch). edit.go: the household's edits
//     (Edit, ValidEditField). flatten.go, document.go: reads.
//   - paths.go: the path and inode indexes. events.go: meta:events, Feed.
//   - follow.go: Repair (the open schema), Following, and the file:*
//     subscription Changes reads (watchFileKeys, track).
//   - changes.go: Changes, the one follower of what changes in the store
//     (the change feed and the file:* notifications, tracked into the
//     field index first) for all the node keeps in step with it, handing batches of
//     changed roots each read once (ReadChanged: a thousand per round
//     trip; each root's announced CID and its Document, from which every
//     consumer computes what it keeps); a write to a field queues its
//     root only when some consumer's Fields takes it (a peer's claim by
//     its own name: FieldName), a feed entry for every consumer; sweeps
//     at start, after a trim or a lost subscription, on request.
//   - merge.go: MergeRecord, the conflict-free merge of peers' records,
//     and the eviction of roots known only from peers.
//   - fillin.go: Document.Shown, what a local file shows of what
//     peers' records said of it where it has nothing of its own (a
//     field its file name alone gave, FromNameField, is a guess a peer's
//     word replaces), the majority of distinct households deciding, and
//     where each shown field came from.
//   - summary.go: what the store reads for a list or a search hit:
//     Summary (File, the API's form of it), SummaryOfFields (the node's
//     rules for a file's title, year and episode from its flat fields),
//     CatalogEntryOf (the catalog's summary of a document), SearchHit
//     and SearchHits (a search page's hits in one round trip), the
//     search limits and SidecarField. The search index and its word
//     rules live in node/search, out of Redis.
//   - snapshot.go: the snapshot format (docs/schema.md, Snapshots): its
//     header, root lines and trailer, the writer and SnapshotReader,
//     which checks every line, the count and the SHA-256.
//     snapshot_export.go: ExportSnapshot (SSCAN of file:__index__ in
//     batches, each batch read by ReadChanged's pipeline and the
//     states of its paths). snapshot_import.go:
//     ImportSnapshot (the whole file checked first, then applied root
//     by root; meta:import while it runs) and its merge and replace
//     rules; snapshot_apply.go: how a root is written through the
//     lifecycle operations, SetFields, AddAlias and MergeRecord.
//   - watch.go: the household's members and what each watched
//     (Members, AddMember, RemoveMember, SetWatch, Watch, Watching,
//     ForgetWatch), and the watch state of a snapshot's roots.
//   - check.go: Check, every schema invariant (fsck; uses SCAN).
//   - rootid.go: root IDs. errors.go: sentinel errors.
//   - version.go: Layout, meta:layout and LayoutVersion; what Open does
//     with an empty, an older or a newer store. upgrade.go: the in-place
//     upgrade of an older layout (one SCAN in batches, resumed from
//     meta:upgrade).
//   - cache.go: the document cache of DocumentByCID (Options.DocCache)
//     and what drops its entries.
//   - canonical.go: CanonicalCIDs, in one round trip the canonical CID
//     of each of some roots and of the local file each of some CIDs names.
//   - catalog.go: CatalogEntries, what a list of the library shows of
//     some roots (title, year, season, episode, size, type, canonical CID,
//     source), read in batches of 256 roots per script from the few
//     fields a list needs, never a whole document (CatalogField: the
//     fields an entry reads, what the node's catalog takes writes of).
//
// # Layouts and upgrades
//
// meta:layout records the layout a store is written in (version.go).
// Open stamps an empty database with Layout, refuses a store of a newer
// layout (ErrLayoutNewer, naming both versions; nothing is written) and
// upgrades an older one in place before it returns (upgrade.go): one SCAN
// over the keys in batches, each batch one script that converts its keys
// and records the SCAN cursor in meta:upgrade, so an upgrade killed at
// any point resumes at the next Open and converting a key twice changes
// nothing. meta:layout is written last. Layout 1 (no meta:layout) is the
// layout before versions were recorded; its upgrade moves fields:<root>
// from a SET to the HASH above with own:<root> and toks:<root> folded in,
// turns the tok: sorted sets into tk: postings (hashes) rebuilt from
// toks:<root>, and drops the inode: sets that list one path other than a
// symbolic link. The upgrade from layout 2 (lua/upgrade3.lua) folds each
// path:<path> hash into the path's member of path:__index__, deletes the
// search postings (tk:<token>, the //<token> entries of fields:<root>)
// and drops members the path index listed without a hash; and in a store
// written before learned: existed, where a root with peers has no
// learned:<root>, it records every member of supplied:<root> that is no
// own digest as learned from all the root's peers: nothing tells those
// members from ones the household supplied, and a wrong one vouched for
// would travel on under the household's signature (docs/schema.md).
//
// # The document cache
//
// With Options.DocCache, DocumentByCID keeps up to that many documents in
// memory (cache.go). Every write script of the node ends by invalidating
// all of them (read-your-writes: a read that starts after a write
// returned never sees what it replaced); outside writers' file:* and
// cid:* keys drop the entries they concern through keyspace
// notifications as they arrive; while the subscription is down, or its
// notifications run more than 100 ms late (a beat published on it every
// 50 ms measures that), nothing is served from memory. A read's result
// is kept only if nothing was written while it ran.
//
// # Concurrency
//
// A Store is safe for concurrent use; it holds a go-redis pool. A Server
// runs one supervising goroutine until Close; Changes.Run runs on the
// caller's goroutine and two more (the feed, the subscription) until its
// context ends, and calls its consumers on the caller's. A Feed is for one goroutine. Request
// paths (GetByCID, Document, DocumentByCID, Path) never SCAN or KEYS; only
// Check and Repair do. ExportSnapshot and ImportSnapshot (a replace's
// last step) walk file:__index__ with SSCAN, in batches.
package store
