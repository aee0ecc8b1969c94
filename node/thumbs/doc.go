// Package thumbs makes the thumbnails of posters and other artwork the
// page shows (GET /api/thumb/<cid>): the image a CID names, decoded
// (JPEG, PNG, GIF, WebP), scaled to one of a few widths and encoded as
// JPEG, cached on disk under the data directory by the image's CID and
// the width. It knows nothing of the store, libp2p or HTTP: the node
// hands it a way to open the image's bytes.
//
// # Files
//
//   - thumbs.go: Cache (Open, Get), Make, Width, the limits.
package thumbs
