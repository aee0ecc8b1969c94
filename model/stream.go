package model

// StreamState is how a stream the node converts for a browser is made
// (GET /api/stream/<cid>/status), as the converter knows it.
type StreamState struct {
	// Mode is "remux" (both codecs copied: only the container was the
	// problem), "audio" (the audio transcoded to AAC) or "video" (the
	// video transcoded to H.264, and the audio unless the browser
	// decodes it).
	Mode    string  `json:"mode"`
	Start   float64 `json:"start"`
	Running bool    `json:"running"`
	Done    bool    `json:"done"`
	Cached  bool    `json:"cached,omitempty"`
	// Speed is ffmpeg's speed in times the playing speed; Made how far
	// the stream is made, in seconds of the file.
	Speed float64 `json:"speed"`
	Made  float64 `json:"made"`
	// Slow is true while the stream is made slower than it plays; Note
	// says so in a sentence for the page.
	Slow  bool   `json:"slow"`
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
}
