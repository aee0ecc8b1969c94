package ingest

// Test access to the sidecar name readers.
var (
	SubtitleName = subtitleName
	ArtName      = artName
	IsSidecar    = isSidecar
)
