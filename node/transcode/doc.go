// Package transcode makes streams a browser plays of files it cannot:
// fragmented MP4 made by ffmpeg, remuxed when only the container is the
// problem, the audio transcoded to AAC when only the audio is, the video
// to H.264 (libx264, veryfast) only when the browser does not decode it.
//
// A stream starts where the player asks (ffmpeg's -ss; its times start
// at 0, as ffmpeg's MP4 muxer writes them whatever -output_ts_offset
// says), so that a page placing its fragments with Media Source
// Extensions (SourceBuffer.timestampOffset) seeks by asking for a
// stream from the new place. ffmpeg reads the file through a loopback HTTP
// address of the Manager's (with ranges: it seeks in a peer's file,
// fetched over bitswap, as in a local one) and writes the stream to a
// file under Config.Dir, which every player of that stream reads as it
// grows: two players of the same stream share one ffmpeg.
//
// Files: decide.go (Decide: what is copied and what transcoded, given
// the codecs and what the browser decodes; the MIME types asked about
// and answered), args.go (ffmpeg's arguments), manager.go (Manager,
// Config, Open, Status, Close: the slots and the streams being made),
// job.go (one ffmpeg: started niced, its -progress followed for its
// speed, a whole stream kept, a stopped one removed), stream.go (Stream,
// a player's reading of a stream as it grows; the last one gone stops
// its ffmpeg), input.go (the loopback address ffmpeg reads files from),
// cache.go (the streams kept whole, least recently used out past
// Config.CacheBytes).
//
// Goroutines: one per running ffmpeg (follows its progress, waits for
// it, keeps or removes its file, gives its slot back), and the input
// address's server once a stream started. At most Config.Max ffmpeg
// processes run at once (a slot each, a channel); Open waits
// Config.Wait for one, then ErrBusy. The Manager's maps are under one
// mutex, each stream's progress under its own.
package transcode
