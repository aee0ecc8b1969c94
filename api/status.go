package api

// ProvidersAnswer is GET /api/providers/<cid>'s answer: the peers the DHT
// returns as providers of CID.
type ProvidersAnswer struct {
	CID       string   `json:"cid"`
	Providers []string `json:"providers"`
}

// PeersAnswer is GET /api/peers' answer: the connected peers.
type PeersAnswer struct {
	Peers []Peer `json:"peers"`
}

// DataDir is the "dataDir" part of Status: the node's data directory and
// the space left on its file system.
type DataDir struct {
	Path string `json:"path"`
	// FreeBytes is the space still available to the node there (as df
	// says it).
	FreeBytes uint64 `json:"freeBytes"`
	// MinFreeBytes is the free space under which the directory counts as
	// full.
	MinFreeBytes uint64 `json:"minFreeBytes"`
	// Full is FreeBytes < MinFreeBytes: the node serves what it has,
	// takes in no new file and is not ready until space is freed.
	Full bool `json:"full"`
	// Error is why the free space could not be read.
	Error string `json:"error,omitempty"`
}
