// Package thumbs makes the thumbnails of posters and other artwork the
// page shows (GET /api/thumb/<cid>): the image a CID names, decoded
// (JPEG, PNG, GIF, WebP), scaled to one of a few widths and encoded as
// JPEG, cached on disk under the data directory by the image's CID and
// the width. It knows nothing of the store, libp2p or HTTP: the node
// hands it a way to open the image's bytes.
//
// # Files
//
//   - thumbs.go: Cache (Open, Get), Width: at most Decoders decodes at once, one
//     per thumbnail asked for together, and the CIDs of images that make
//     none remembered (MaxFailed).
//   - make.go: Make, the limits (MaxSource, MaxPixels, MaxDecoded,
//     each checked from the header), a PNG or JPEG cut short refused
//     before it is decoded, and a large image averaged down before it is
//     filtered.
//   - thumbs_test.go, limits_test.go: what is made and what is refused;
//     flood_test.go: BenchmarkCache_Flood, peak heap and RSS of 36
//     requests at once against one.
//
// # Concurrency
//
// Get is safe for concurrent use: a Cache's mutex guards the thumbnails
// being made and the failures remembered, held only to look them up;
// decodes wait on a semaphore of Decoders, released after the garbage of
// a large one is collected.
package thumbs
