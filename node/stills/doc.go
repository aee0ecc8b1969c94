// Package stills gives every local video without a poster a still: a
// frame ffmpeg takes a tenth of the way into the video (FallbackAt
// seconds in when its duration is not known), at most Width pixels wide,
// kept as a JPEG file named by its IPFS CID (the CID a library file of
// those bytes gets, so that peers can later be served it by that CID)
// and linked on the video's root as store.StillField. Lists show a
// still where a file has no poster (store's posterOf), thumbnails are
// made of it (node/thumbs, through Open), and the page's player shows it
// as its poster frame.
//
// # Files
//
//   - stills.go: Config, Maker (New, Consumer, Take, Open): what each
//     changed root needs (a still made, a link dropped), the links kept
//     by root and the files no root links removed.
//   - run.go: Run, the one worker: a still made into a temporary file,
//     hashed (ingest.FullHash), renamed to <cid>.jpg and linked
//     (store.SetStill); the videos that give none remembered in
//     failed.txt (at most MaxFailed) and logged once.
//   - ffmpeg.go: the ffmpeg command: niced (Nice), bounded by a timeout
//     (Config.Timeout), the frame scaled and written as JPEG.
//   - stills_test.go: stills of real videos made by ffmpeg, against a
//     real store.
//
// # Layout
//
// DATA/stills/<cid>.jpg are the stills; DATA/stills/failed.txt the
// videos' IPFS CIDs that gave none; .tmp-* files are stills being made,
// removed by the next Run when a stop left them. A still no root links
// is removed when its last link goes, or by the sweep after a start.
//
// # Goroutines and concurrency
//
// Take runs on store.Changes' goroutine and only queues: it never runs
// ffmpeg. Run is the one worker, so that one ffmpeg runs at a time, and
// only once Config.Ready says the first scan is done. A mutex guards the
// queue, the links and the failures; it is never held while ffmpeg runs
// or Redis is written.
package stills
