package model

import "time"

// ScanProgress is the progress of the ingester's current (or last) full
// scan: Status.Scan. State is one of ingest's scan states (starting,
// scanning, hashing, watching, polling, idle, stopped).
type ScanProgress struct {
	State      string    `json:"state"`
	FilesDone  int64     `json:"filesDone"`
	FilesTotal int64     `json:"filesTotal"`
	BytesDone  int64     `json:"bytesDone"`
	BytesTotal int64     `json:"bytesTotal"`
	Rate       float64   `json:"bytesPerSecond"`
	FilesRate  float64   `json:"filesPerSecond"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	Errors     int64     `json:"errors"`
	// Hashed counts full hash passes since the scan started.
	Hashed int64 `json:"hashed"`
	// BytesHashed counts the bytes read by full hash passes, as they are
	// read; HashRate is BytesHashed per second of the scan (unchanged
	// files cost nothing, so this is what hashing really runs at).
	BytesHashed int64   `json:"bytesHashed"`
	HashRate    float64 `json:"hashBytesPerSecond"`
	// BytesInFlight are the bytes already read of files still being
	// hashed: BytesDone + BytesInFlight moves while a large file is read.
	BytesInFlight int64 `json:"bytesInFlight"`
}

// ProvideStats are the sweeping provider's statistics and the
// announcer's counters: Status.Provide.
type ProvideStats struct {
	// Keys are the keys in the provider's keystore (CIDKeys + TokenKeys); Regions the keyspace
	// regions they fall in, AvgPrefixLength those regions' mean prefix
	// length in bits.
	Keys            int64   `json:"keys"`
	Regions         int64   `json:"regions"`
	AvgPrefixLength float64 `json:"avgPrefixLength"` // -1 while not measured (offline)
	// NextReprovideAt is when the next region is reprovided.
	NextReprovideAt time.Time `json:"nextReprovideAt,omitzero"`
	// LastCycle is how long the regions reprovided in the last cycle took
	// in all (their mean duration times their number).
	LastCycle time.Duration `json:"lastCycleNs"`
	// Provided and Failed count keys since start (first provides and
	// reprovides), Walks the DHT walks, Messages the DHT messages the
	// provider sent.
	Provided int64 `json:"provided"`
	Failed   int64 `json:"failed"`
	Walks    int64 `json:"walks"`
	Messages int64 `json:"messages"`
	// Queued are keys waiting for their first provide.
	Queued int64 `json:"queued"`
	// Resumed: the start resumed a reprovide cycle persisted under the
	// data directory.
	Resumed bool `json:"resumed"`
	// Connectivity is the provider's view: online, disconnected (it
	// retries) or offline (no peers for a long time: keys wait).
	Connectivity string `json:"connectivity"`
	// CIDKeys and TokenKeys are the keys the announcer gave the keystore:
	// distinct CIDs of local roots, and search token keys (0 with
	// --search-index=false).
	CIDKeys   int `json:"cidKeys"`
	TokenKeys int `json:"tokenKeys"`
	// Announced are the local roots with a CID to announce; FeedResyncs
	// the times the change feed was trimmed past the announcer (it then
	// resyncs the keystore from the store); LastProvided the CID most
	// recently handed to the provider.
	Announced    int    `json:"announced"`
	FeedResyncs  int64  `json:"feedResyncs"`
	LastProvided string `json:"lastProvided,omitempty"`
	// Held are the provider records the household's DHT holds (its own
	// and its peers'); HandedOver the records it handed to peers that
	// became the closest to their keys as the federation changed, in
	// HandoffMessages messages; TakenOver the records peers handed to it
	// (docs/federation.md, "a federation that grows").
	Held            int   `json:"held"`
	HandedOver      int64 `json:"handedOver"`
	HandoffMessages int64 `json:"handoffMessages"`
	TakenOver       int64 `json:"takenOver"`
	// RegionsProvided are the keystore's keys grouped by keyspace region
	// (their first avgPrefixLength bits, rounded down), each with when it
	// was last provided and the latest findability check of a key of it;
	// Findable sums those checks (docs/federation.md, "a federation that
	// grows").
	RegionsProvided []ProvidedRegion `json:"regionsProvided"`
	Findable        Findable         `json:"findable"`
}

// ProvidedRegion is one keyspace region of the household's keys: the keys
// whose keyspace key (SHA-256 of the multihash) starts with Prefix.
type ProvidedRegion struct {
	// Prefix is the region's bits, "0110"; "" is the whole keyspace.
	Prefix string `json:"prefix"`
	Keys   int    `json:"keys"`
	// LastProvidedAt is the oldest of its keys' last provides (an
	// ADD_PROVIDER a peer accepted), since the node started: when the
	// whole region was last covered; zero while a key of it was not
	// provided yet. NewestProvidedAt is the most recent.
	LastProvidedAt   time.Time `json:"lastProvidedAt,omitzero"`
	NewestProvidedAt time.Time `json:"newestProvidedAt,omitzero"`
	// The latest findability check of a key of the region: CheckedKey
	// (base58 multihash) was looked up at CheckedAt, Closest peers were
	// the closest to it then, and Holding of them returned this household
	// among its providers.
	CheckedKey string    `json:"checkedKey,omitempty"`
	CheckedAt  time.Time `json:"checkedAt,omitzero"`
	Closest    int       `json:"closest"`
	Holding    int       `json:"holding"`
}

// Findable is whether the federation can find the household: the latest
// check of every region summed. CheckedAt is the last check; Checks count
// them since start, CheckMessages their GET_PROVIDERS requests (not in
// ProvideStats.Messages).
type Findable struct {
	CheckedAt     time.Time `json:"checkedAt,omitzero"`
	Regions       int       `json:"regions"` // regions with a check
	Closest       int       `json:"closest"`
	Holding       int       `json:"holding"`
	Checks        int64     `json:"checks"`
	CheckMessages int64     `json:"checkMessages"`
}

// OldestRegionProvided is when the region provided longest ago was last
// provided; ok is false when there is no region, zero when a region was
// not provided yet since the node started.
func (p ProvideStats) OldestRegionProvided() (at time.Time, ok bool) {
	for i, r := range p.RegionsProvided {
		if i == 0 || r.LastProvidedAt.Before(at) {
			at = r.LastProvidedAt
		}
	}
	return at, len(p.RegionsProvided) > 0
}
