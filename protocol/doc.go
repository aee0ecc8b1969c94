// Package protocol is the network contract of a MetaMesh node, kept pure and
// free of I/O except the framing of stream messages.
//
// It owns the rules every peer must agree on byte for byte:
//
//   - cid.go: strict parsing of the canonical CID string form (CIDv1, multibase
//     base32 lower) and normalisation of friendlier input (CIDv0, other
//     multibases) for the API and CLI.
//   - rank.go: the rank ladder that elects a file's canonical CID (Rank,
//     Better, Canonical) and Inspect, which describes one CID.
//   - midhash.go: the midhash256 definition, an O(1) content address.
//   - record.go: the Record a node answers about one file, its caps,
//     NewRecord, Validate and ShareableKey (which meta keys may cross the
//     wire); recordjson.go: the strict decoder of its JSON.
//   - envelope.go: SealRecordAs and OpenRecordAs (SealRecord and
//     OpenRecord for 1.0.0), the signed envelope and every check a
//     received record must pass.
//   - name.go: a household's name: MaxName, CheckName (what a household
//     may call itself) and CleanName (what a peer's claim is cut to).
//   - framing.go: WriteRequest, ReadRequest, WriteResponse, ReadResponse,
//     the length-prefixed messages of the record protocol on an io.Reader
//     or io.Writer (the node owns the streams, their deadlines, Reset and
//     Close), and the length-prefixed JSON request the search and library
//     protocols share (writeJSONRequest, readJSONRequest).
//   - search.go: the search protocol, 1.0.0, 1.1.0 and 1.2.0:
//     SearchRequest (Write/ReadSearchRequest), SearchHit, SearchAnswer,
//     SealSearchAnswer and OpenSearchAnswer, SealSearchAs and OpenSearchAs
//     (SealSearch and OpenSearch for 1.0.0).
//   - library.go: the library protocol, /metamesh/library/1.0.0:
//     LibraryRequest (Write/Read/ParseLibraryRequest), LibraryEntry,
//     LibraryAnswer, SealLibrary and OpenLibrary.
//   - tokens.go: Tokens, the normalization of search text into tokens
//     (what a search matches, and what the DHT's token keys name);
//     searchkey.go: SearchTokenKey and Keyed, the keyword index's DHT keys.
//   - handoff.go: the handoff protocol: HandoffRecord, WriteHandoff,
//     ReadHandoff and ParseHandoff (the provider records a household
//     hands to a peer that became one of the closest to their keys).
//   - errors.go: the package's sentinel errors.
//   - testdata/record-vector.txt: one request and one response, byte for
//     byte, signed with a fixed key, for other implementations to test
//     against; testdata/search-vector.txt the same for search, in 1.0.0
//     and 1.1.0; testdata/record-vector-1.1.0.txt and
//     search-vector-1.2.0.txt the versions that carry a household's name;
//     testdata/library-vector.txt one exchange of the library protocol.
//
// Nothing here starts goroutines or keeps state (the record type is not
// registered with go-libp2p's record.RegisterType); every function is safe
// for concurrent use.
//
// # The record protocol, /metamesh/record/1.0.0
//
// A node asks a peer for the record of one CID on a new libp2p stream with
// protocol ID "/metamesh/record/1.0.0". The asker writes one request and
// closes its write side; the answerer writes one response and closes the
// stream. Each message is
//
//	length   unsigned varint (multiformats unsigned-varint: LEB128, 7 bits
//	         per byte, least significant group first, high bit set on every
//	         byte but the last, minimal: no trailing 0x00 group)
//	body     length bytes
//
// A length that is not minimally encoded is an error; a length prefix that
// needs more bytes than the cap's own encoding (2 bytes for a request, 3
// for a response) is rejected as too large before anything else is read.
//
// Request body: the asked CID as UTF-8 text, 1 to MaxRequestCID (512)
// bytes. Any valid CID form is accepted (CIDv0 "Qm…", CIDv1 in any
// multibase); this implementation sends the canonical form (CIDv1,
// base32 lower, "b…"), and never asks for a CID whose canonical form is
// longer than 512 bytes (Normalize refuses it). Example, asking for a 59-character CID:
//
//	3b 62 61 66 79 62 65 69 …    0x3b = 59, then "bafybei…"
//
// Response body: zero bytes when the answerer has no record (the whole
// response is the single byte 0x00), otherwise a go-libp2p signed
// envelope of at most MaxRecordMessage (1 MiB, 1048576) bytes, so the
// prefix is 1 to 3 bytes. The envelope is the protobuf (proto3)
//
//	message Envelope {
//	  PublicKey public_key = 1;  // libp2p key: { KeyType Type = 1; bytes Data = 2; }
//	  bytes payload_type   = 2;  // the 22 bytes "/metamesh/record/1.0.0"
//	  bytes payload        = 3;  // the record JSON below
//	  bytes signature      = 5;
//	}
//
// and signature is the signer's signature (Ed25519 for MetaMesh nodes; any
// libp2p key type verifies) over
//
//	uvarint(15) "metamesh-record" uvarint(22) "/metamesh/record/1.0.0" uvarint(len(payload)) payload
//
// (the domain RecordDomain is signed but not sent). The payload is UTF-8
// JSON, one object with exactly these five fields, each once, names
// case-sensitive, no others:
//
//	{"cid":  canonical CID of "cids" (rank.go: Canonical),
//	 "cids": [every member of the file's key-set the signer vouches for
//	          (see below), canonical string form, sorted by byte value,
//	          no repeats, 1 to MaxRecordCIDs (256)],
//	 "meta": {flat shareable fields: string keys of 1 to MaxMetaKey (512)
//	          bytes made of non-empty segments separated by "/" (no
//	          leading or trailing "/", no "//"), string values of at most
//	          MaxMetaValue (64 KiB), at most MaxRecordMeta (4096) entries,
//	          no repeated key},
//	 "peer": the producer's peer ID in base58 ("12D3KooW…"), the signer,
//	 "time": when it was produced, RFC 3339 ("2025-03-14T15:09:26Z";
//	         a fraction of a second and any offset are accepted)}
//
// This implementation writes fields in that order, meta keys sorted, no
// insignificant whitespace, and time in UTC to the second; readers must not
// depend on any of that. Meta never carries a key whose first "/" segment
// is filePath, filePathBytes, duplicates, duplicatesBytes, duplicateCount,
// mtime, cids or origin (local paths, local state, the key-set, and what
// other peers said, which a node must not re-sign as its own); nor the
// root ID, which is no field at all.
//
// Which members "cids" carries. A node vouches for a member of one of its
// files when it computed the member from the file's own bytes (midhash,
// sha2-256, IPFS CID) or when it was supplied on the household itself (an
// alias its API or its own Redis was given); it does not vouch for a
// member it holds only because peers' records carried it. A record carries
// the vouched members only, and "cid" is their canonical, so a member a
// peer made up cannot become the file's name under an honest household's
// signature and spread past the households that merged it from that peer
// directly: the signature says who vouches for every member it covers. A
// node asked for a CID it holds only from peers answers nothing (the
// peers that vouch for it answer), as it does for files it knows only
// from peers. The format is unchanged: a receiver cannot tell, and need
// not; it merges what each signer vouches for under that signer.
//
// A receiver accepts a record only if (OpenRecord): the envelope's
// signature verifies for the domain; its payload type is exactly
// "/metamesh/record/1.0.0"; its signer is the peer at the other end of the
// stream and the record's "peer"; the payload parses as above; every member
// of "cids" is a valid CID in canonical form, sorted without repeats;
// "cid" is their canonical; the caps hold; no meta key is forbidden; the
// time parses; and "cids" holds the asked CID (compared in canonical form).
// testdata/record-vector.txt holds one exchange byte for byte.
//
// # A household's name
//
// A household may call itself by a name, for people to read where they
// would otherwise read its peer ID ("Alice's NAS"). It is the household's
// own claim, signed as everything it answers is, and verified by no one:
// two households may claim the same name, and a name says nothing a peer
// ID does not. On the wire it is a JSON string, the field "name", of at
// most MaxName (64) bytes of UTF-8, with no white space at either end and
// no control character (Unicode Cc) nor mark that reorders text (U+200E,
// U+200F, U+202A to U+202E, U+2066 to U+2069) (CheckName); a household
// with no name leaves the field out. It travels in the record protocol
// 1.1.0 and the search protocol 1.2.0 below: the 1.0.0 decoders refuse
// any field they do not know, so a field added to 1.0.0 would have made
// old peers drop every answer; a peer that speaks 1.0.0 alone is answered
// in 1.0.0, without the name, as before. A receiver never refuses an
// answer for its name: it cleans it (CleanName: invalid UTF-8, U+FFFD and
// the characters above removed, white space trimmed, cut to MaxName bytes
// at a character boundary), and a name that cleans to "" is no name.
//
// # The record protocol, /metamesh/record/1.1.0
//
// The same exchange as 1.0.0: the same request, framing, caps, domain
// and checks. The answer's payload type is the 22 bytes
// "/metamesh/record/1.1.0", and its record may hold a sixth field, "name"
// (see above), written after "meta" and before "peer"; it may appear at
// most once. A 1.1.0 record without a name is 1.0.0's payload under
// 1.1.0's payload type. An answer is read in the version the stream was
// opened in: a 1.1.0 payload type on a 1.0.0 stream, or the reverse, is
// ErrWrongPayloadType. A node answers both versions and asks 1.1.0 first
// (libp2p's negotiation falls back to 1.0.0 on a peer that speaks only
// that). testdata/record-vector-1.1.0.txt holds an exchange whose record
// is named, byte for byte.
//
// # The search protocol, /metamesh/search/1.0.0
//
// One request, one response, framed like the record protocol's messages
// (unsigned-varint length, then the body). Request body: UTF-8 JSON
// {"q": text of 1 to 256 bytes, "limit": an integer, 1 to 100}, at most
// MaxSearchRequest (4 KiB); exactly these two fields, each once, names
// case-sensitive, no others, nothing after the object (a request that
// breaks any of this gets the stream reset). Response body: a signed
// envelope as for records, at most MaxSearchMessage (1 MiB), but with
// domain "metamesh-search" (SearchDomain) and payload type the 22 bytes
// "/metamesh/search/1.0.0"; its payload is a JSON list of at most the
// request's limit of hits, each exactly
//
//	{"cid": Canonical(cids), "title": ≤ 1024 bytes, "size": bytes ≥ 0,
//	 "fileType": ≤ 64 bytes, "cids": [canonical form, sorted, no repeats,
//	 1 to 256]}
//
// An answerer lists only files it holds itself (never what peers told it,
// never paths), each hit's "cids" the members it vouches for, as in a
// record. A receiver accepts an answer only if (OpenSearch) the
// signature verifies for the domain, the payload type matches, the signer
// is the peer at the other end of the stream, it holds no more hits than
// the request's limit, and every hit is valid; otherwise the whole answer
// is dropped.
//
// # The search protocol, /metamesh/search/1.1.0
//
// The same exchange as 1.0.0: the same request, framing, caps and checks,
// the same signature domain "metamesh-search". The answer's payload type
// is the 22 bytes "/metamesh/search/1.1.0", and each hit holds 1.0.0's
// five fields, in the same order, then any of these, in this order, each
// left out when the answerer does not know it:
//
//	"year": 1 to 9999, "season": 0 to 99999 (MaxHitNumber),
//	"episode": 0 to 99999, "episodeTitle": UTF-8, ≤ 1024 bytes,
//	"imdbid": "tt" and 7 to 10 digits
//
// A hit with a field of neither list, or one outside its range, is
// malformed, and the whole answer is dropped. An answer is read in the
// version the stream was opened in: a 1.1.0 payload type on a 1.0.0
// stream, or the reverse, is dropped; a 1.0.0 answer with any of the
// fields above too. A node answers both versions (a 1.0.0 answer holds the
// five fields alone) and asks 1.1.0 first, 1.0.0 when that is what the
// peer speaks (libp2p's protocol negotiation picks the first the peer
// supports). testdata/search-vector.txt holds one request and its answer
// in both versions, byte for byte.
//
// # The search protocol, /metamesh/search/1.2.0
//
// The same exchange as 1.1.0, with the payload type the 22 bytes
// "/metamesh/search/1.2.0". The payload is one JSON object instead of a
// list:
//
//	{"name": the household's name (see above), left out when it has none,
//	 "hits": [at most the request's limit of 1.1.0 hits]}
//
// with no other field and nothing after it; "hits" is required (an empty
// list when nothing matched), and a hit is checked as in 1.1.0. A node
// answers all three versions and asks 1.2.0 first. An older answer
// carries no name: the asker shows the peer ID.
// testdata/search-vector-1.2.0.txt holds a request and a named answer.
//
// # Search token keys: the keyword index on the DHT
//
// A household provides on the DHT (the /metamesh Kademlia, as a provider
// record, like a file's canonical CID) one key for every distinct token of
// its own files' titles (title, original title, show and episode titles,
// "titles/<lang>"), IMDb, TMDB and TVDB IDs and genres that carries a key;
// never a token of a file name or path, never one of a file known only
// from peers. A federated search looks up the providers of its words'
// keys and asks the households that provide every one of them.
//
// Tokens (Tokens) are cut from text this way: the text is decomposed
// (Unicode NFKD) and its nonspacing marks (category Mn) dropped; every
// maximal run of letters and decimal digits (Unicode L and Nd) is one
// token, anything else separates; letters are lower-cased (Unicode simple
// lower case), and ß, ẞ → "ss", æ/Æ → "ae", ø/Ø → "o", œ/Œ → "oe", đ/Đ →
// "d", ł/Ł → "l", þ/Þ → "th", ð/Ð → "d", ı → "i". A token that is "s"
// and 1 to 4 digits, "e" and 1 to 4 digits, or "s" and 1 to 4 digits,
// "e", 1 to 4 digits, is written with each number as at least two digits
// ("S1E2" → "s01e02", "E003" → "e03"). A token is cut to its first 64
// bytes (MaxTokenLen).
//
// A token carries a key (Keyed) unless it is: shorter than three
// characters (Unicode code points); four ASCII digits from 1880 to 2099
// (a year); a season or episode mark as written above ("s01", "e07",
// "s01e07"); ASCII digits then "p" or "i" (a resolution: "720p"); or one
// of the stop words and tags of unkeyedWords (searchkey.go: articles,
// conjunctions and prepositions of English, French, German, Spanish,
// Italian, Dutch and Portuguese; container, source, codec, audio and HDR
// tags). Such tokens would name most of the federation; a search still
// matches them, on the households it asks.
//
// The key of a token (SearchTokenKey) is the CIDv1, codec raw (0x55),
// multihash sha2-256, of the bytes
//
//	"metamesh/search-token/1" 0x00 <the token as UTF-8>
//
// so "heat" has the key of sha2-256("metamesh/search-token/1\x00heat"),
// bafkreicaemn6eqe7zkjtpi6mjmzvhgb7txhamvhw7ja4jbmezeg6msie6i; the DHT
// stores and finds it by that multihash, like any provider record. The
// version in the prefix changes with any change of the rules above.
// testdata/search-token-keys.tsv lists texts, their tokens and each
// token's key, or "-" for a token that carries none.
//
// # The handoff protocol, /metamesh/handoff/1.0.0
//
// A household that holds provider records (kad-dht's, for its own keys and
// its peers') hands them to a peer that has become one of the 20 closest
// to their keys, on a new stream with protocol ID
// "/metamesh/handoff/1.0.0". The sender writes 1 to MaxHandoffMessages
// (64) messages and closes its side; the receiver answers nothing. A
// message is framed as the record protocol's (an unsigned varint length,
// at most MaxHandoffMessage, 1 MiB, then the body); its body is JSON,
// exactly:
//
//	{"records":[{"key":"<multihash, base58btc>",
//	  "providers":[{"id":"<peer ID>","addrs":["<multiaddr>",…],"ttl":<seconds>}]}]}
//
// with 1 to MaxHandoffRecords (4096) records, 1 to MaxHandoffProviders
// (20) providers a record, at most MaxHandoffAddrs (8) addresses a
// provider (each at most 256 bytes in binary form), and a ttl of 1 to
// MaxHandoffTTL (172800) seconds: how long the provider's record stays
// valid, counted from its provide, not from the handoff. Unknown fields,
// trailing data or any record that breaks a cap make the whole message
// refused (ErrBadHandoff). A household may also ask a peer for the
// records it should hold, on "/metamesh/handoff-ask/1.0.0"
// (HandoffAskProtocolID): it writes nothing and closes its side; the
// peer answers with handoff messages as above and closes (or resets the
// stream, when the same household asked less than 30 s before). A provider record is the provider's own claim,
// as an ADD_PROVIDER is, and carries no signature; a receiver keeps only
// records of keys it is among the closest to.
//
// # The library protocol, /metamesh/library/1.0.0
//
// A household asks a friend's household for one page of its list of
// films and shows, as the friend's own page lists them. One request, one
// response on a new stream with protocol ID "/metamesh/library/1.0.0",
// framed like the record protocol's messages (unsigned-varint length,
// then the body); the asker closes its write side after the request.
// Request body: UTF-8 JSON, at most MaxLibraryRequest (4 KiB), one object
// with these fields, each at most once, names case-sensitive, no others,
// nothing after the object:
//
//	{"view":   "films", "shows", "seasons" (of one show) or "episodes"
//	           (of one season of one show); required,
//	 "show":   a show's key, as a "shows" answer names it, 1 to 1024
//	           bytes; given exactly with "seasons" and "episodes",
//	 "season": 0 to 99999; given exactly with "episodes",
//	 "q":      words, at most 256 bytes, with "films" and "shows" only:
//	           the entries whose title holds, for every token of q
//	           (Tokens), a token that begins with it,
//	 "page":   1 to 1048576 (MaxLibraryPage); required,
//	 "limit":  1 to 100 (MaxLibraryEntries); required}
//
// Numbers are JSON integers. A request that breaks any of this gets the
// stream reset. The answerer answers a peer it does not show its list to
// with a response of zero length (the single byte 0x00): a refusal, told
// apart from a failure (a reset stream) and from an empty list. Otherwise
// the response body is a signed envelope as for records, at most
// MaxLibraryMessage (1 MiB), with domain "metamesh-library"
// (LibraryDomain) and payload type the 23 bytes
// "/metamesh/library/1.0.0"; its payload is one JSON object:
//
//	{"name":      the household's name (see above), left out when none,
//	 "view":      the request's view,
//	 "show":      the request's show, left out when it gave none,
//	 "showTitle": the show's title, ≤ 1024 bytes, left out when none,
//	 "season":    the request's season, left out when it gave none,
//	 "page":      the request's page,
//	 "pages":     ceil(total / the request's limit),
//	 "total":     the entries of the whole list (after q), 0 to 2^30,
//	 "films":     the household's films, "shows": its shows, 0 to 2^30,
//	 "entries":   [at most the request's limit of entries]}
//
// with no other field, nothing after it, every field but name, show,
// showTitle and season required. An entry is an object of these fields,
// in this order, each left out when empty or zero, no others:
//
//	"kind" ("film" in films, "show" in shows, "season" in seasons,
//	"episode" in episodes; required), "cid" (the file's canonical CID,
//	canonical form; films and episodes, required), "title" (≤ 1024 bytes;
//	an episode's is its show's), "year" (1 to 9999), "show" (the show's
//	key; on all but films, required), "season" (0 to 99999; seasons and
//	episodes, required), "episode" (0 to 99999; episodes, required),
//	"episodeTitle" (≤ 1024 bytes; episodes), "size" (bytes; films and
//	episodes), "poster" (the poster's canonical CID), "seasons" (a
//	show's), "episodes" (a show's or a season's)
//
// The answerer lists its own local files only (never what peers told it,
// never paths), in its page's order: films by title, year and CID; shows
// by key (the show's title folded by Tokens); seasons by number; episodes
// by number. A receiver accepts an answer only if (OpenLibrary) the
// signature verifies for the domain, the payload type matches, the
// signer is the peer at the other end of the stream, the payload is as
// above, its view, show, season and page are the request's, its pages
// agree with its total and the request's limit, it holds no more entries
// than the limit nor than its total, and every entry is valid for the view; the name is
// cleaned (CleanName), never refused for. Otherwise the whole answer is
// dropped. testdata/library-vector.txt holds a request and its answer,
// byte for byte.
package protocol
