package transcode

import "strings"

// Source is what ffprobe said of a file (the document's fileinfo):
// Container is fileinfo/formatName ("matroska,webm"), Video and Audio
// the codec names of its first video and audio streams ("hevc", "ac3";
// "" when it has none).
type Source struct {
	Container string
	Video     string
	Audio     string
}

// Browser is what the browser said it decodes in fragmented MP4 (Media
// Source Extensions): the source's video codec, its audio codec.
type Browser struct {
	Video bool
	Audio bool
}

// Mode is how a stream is made.
type Mode string

// The modes, from the cheapest.
const (
	// ModeRemux copies both codecs into fragmented MP4: only the
	// container is the problem.
	ModeRemux Mode = "remux"
	// ModeAudio copies the video and transcodes the audio to AAC.
	ModeAudio Mode = "audio"
	// ModeVideo transcodes the video to H.264 (libx264, veryfast), and
	// the audio to AAC unless the browser decodes it.
	ModeVideo Mode = "video"
)

// Plan is what ffmpeg copies and what it transcodes.
type Plan struct {
	Mode      Mode
	CopyVideo bool
	CopyAudio bool
}

// mp4Video and mp4Audio are the codecs ffmpeg puts into MP4 as they are,
// each with the MIME codecs parameter a browser is asked about (and told
// in the stream's Content-Type); any other codec is transcoded.
var (
	mp4Video = map[string]string{
		"h264": "avc1.640028",
		"hevc": "hvc1.1.6.L120.90",
		"av1":  "av01.0.08M.08",
		"vp9":  "vp09.00.40.08",
	}
	mp4Audio = map[string]string{
		"aac":  "mp4a.40.2",
		"mp3":  "mp4a.69",
		"opus": "opus",
		"flac": "flac",
		"ac3":  "ac-3",
		"eac3": "ec-3",
	}
)

// The codecs of what is transcoded: H.264 High and AAC-LC.
const (
	h264Codec = "avc1.640028"
	aacCodec  = "mp4a.40.2"
)

// Decide is the plan for src in a browser that says br: a stream copies
// each codec the browser decodes and MP4 carries, and transcodes the
// other. A file the browser plays as it is needs no stream at all; that
// is the page's to see (the file's own type), not Decide's.
func Decide(src Source, br Browser) Plan {
	copyVideo := src.Video == "" || (br.Video && mp4Video[src.Video] != "")
	copyAudio := src.Audio == "" || (br.Audio && mp4Audio[src.Audio] != "")
	p := Plan{CopyVideo: copyVideo, CopyAudio: copyAudio}
	switch {
	case !copyVideo:
		p.Mode = ModeVideo
	case !copyAudio:
		p.Mode = ModeAudio
	default:
		p.Mode = ModeRemux
	}
	return p
}

// native are the MIME types a browser is asked about for codecs MP4
// does not carry as they are: whether it decodes the file as it is.
var native = map[string]string{
	"vp8":       `video/webm; codecs="vp8"`,
	"theora":    `video/ogg; codecs="theora"`,
	"mpeg4":     `video/mp4; codecs="mp4v.20.8"`,
	"vorbis":    `audio/ogg; codecs="vorbis"`,
	"pcm_s16le": `audio/wav; codecs="1"`,
	"pcm_s24le": `audio/wav; codecs="1"`,
}

// Types are the MIME types a browser is asked about for src: each codec
// as it would be in fragmented MP4, or, for a codec MP4 does not carry
// as it is (which a stream transcodes whatever the browser says), as
// the browser would play it in its own container; "" for a codec no
// type names (taken as one the browser does not decode) or no stream.
func Types(src Source) (video, audio string) {
	if c := mp4Video[src.Video]; c != "" {
		video = `video/mp4; codecs="` + c + `"`
	} else {
		video = native[src.Video]
	}
	if c := mp4Audio[src.Audio]; c != "" {
		audio = `audio/mp4; codecs="` + c + `"`
	} else {
		audio = native[src.Audio]
	}
	return video, audio
}

// ContentType is the MIME type of p's stream of src, with its codecs,
// as Media Source Extensions take it.
func ContentType(src Source, p Plan) string {
	var codecs []string
	switch {
	case src.Video == "":
	case p.CopyVideo:
		codecs = append(codecs, mp4Video[src.Video])
	default:
		codecs = append(codecs, h264Codec)
	}
	switch {
	case src.Audio == "":
	case p.CopyAudio:
		codecs = append(codecs, mp4Audio[src.Audio])
	default:
		codecs = append(codecs, aacCodec)
	}
	kind := "video"
	if src.Video == "" {
		kind = "audio"
	}
	return kind + `/mp4; codecs="` + strings.Join(codecs, ",") + `"`
}
