package ingest

// The words of release names: the tokenizer and the vocabulary of
// technical tokens (sources, resolutions, codecs, languages, editions,
// flags) with the field each one fills.

// tokKind says what a token of a name is.
type tokKind uint8

const (
	tWord       tokKind = iota // unknown: a title word
	tNumber                    // digits only (or "12v2"); token.val holds the value
	tCont                      // continues the item started by an earlier token
	tEpisode                   // S01E05, 1x05, Season 2 Episode 5, Ep 5
	tSeason                    // a season without an episode: S02, Season 2
	tDate                      // 2013.10.21, the air date of a daily show
	tSource                    // BluRay, WEB-DL, HDTV…
	tResolution                // 1080p, 4K…
	tVideoCodec                // x264, HEVC, XviD…
	tAudioCodec                // DTS, AC3, DDP5.1…
	tLanguage                  // FRENCH, German, Multi…
	tEdition                   // Director's Cut, EXTENDED, Criterion…
	tOther                     // a recognised flag with no field: PROPER, 10bit, READNFO…
	tPart                      // Part III, pt2
	tCD                        // CD1, Disc 2
	tBonus                     // -x02- (a bonus feature)
	tFilm                      // -f21- (the number of a film in a series)
	tWebsite                   // [sharethefiles.com], www.site.org
	tGroup                     // a leading [Group]
)

// token is one run of non-separator bytes of a name.
type token struct {
	start, end int
	val        int     // the number of a tNumber, tPart or tCD
	str        string  // the field value a technical token stands for
	kind       tokKind // what the token is
	weak       bool    // a technical word that may also be a title word
	br         int8    // index of the bracket group holding the token, -1 outside
}

// bracket is a top-level (), [] or {} group of a name.
type bracket struct {
	first, last int // token indexes, last < first when empty
	tag         bool
}

// vocabEntry is what a known technical word stands for.
type vocabEntry struct {
	kind  tokKind
	value string
	weak  bool
}

var (
	vocab        = map[string]vocabEntry{} // lower-case words, multi-token ones joined by a space
	bracketLangs = map[string]string{}     // two-letter codes recognised only inside brackets
	audioPrefix  = map[string]string{}     // "dd5", "aac2": a codec with its channel count glued on
)

func addVocab(kind tokKind, weak bool, value string, keys ...string) {
	for _, k := range keys {
		vocab[k] = vocabEntry{kind: kind, value: value, weak: weak}
	}
}

func init() {
	const strong, weak = false, true
	addVocab(tSource, strong, "Blu-ray", "bluray", "blu ray", "bdrip", "brrip", "bdremux", "bd25", "bd50", "bdr", "bd rip", "br rip")
	addVocab(tSource, weak, "Blu-ray", "bd")
	addVocab(tSource, strong, "Ultra HD Blu-ray", "uhd bluray", "uhd blu ray", "uhdbd")
	addVocab(tSource, strong, "HD-DVD", "hddvd", "hd dvd", "hddvdrip")
	addVocab(tSource, strong, "DVD", "dvdrip", "dvd", "dvdr", "dvd5", "dvd9", "dvd rip", "dvdivx", "dvdmux", "ntsc", "pal")
	addVocab(tSource, strong, "Blu-ray", "bdmux", "brripmux", "bdripmux", "hdlight", "mhd")
	addVocab(tSource, strong, "WEB-DL", "web dlrip", "webdlrip", "webmux", "web dlmux")
	addVocab(tSource, strong, "Screener", "dvdscr", "dvdscreener", "screener", "bdscr")
	addVocab(tSource, weak, "Screener", "scr")
	addVocab(tSource, strong, "HDTV", "hdtv", "hdtvrip", "pdtv", "sdtv", "dsr", "dsrip", "dthrip", "tvrip", "satrip")
	addVocab(tSource, strong, "WEB-DL", "webdl", "web dl", "webhd")
	addVocab(tSource, strong, "WEBRip", "webrip", "web rip")
	addVocab(tSource, weak, "WEB", "web")
	addVocab(tSource, strong, "HDRip", "hdrip")
	addVocab(tSource, strong, "CAM", "camrip", "hdcam")
	addVocab(tSource, weak, "CAM", "cam")
	addVocab(tSource, strong, "Telesync", "telesync", "hdts")
	addVocab(tSource, weak, "Telesync", "ts")
	addVocab(tSource, strong, "Telecine", "telecine")
	addVocab(tSource, weak, "Telecine", "tc")
	addVocab(tSource, strong, "VHS", "vhsrip")
	addVocab(tSource, weak, "VHS", "vhs")
	addVocab(tSource, strong, "PPV", "ppvrip")
	addVocab(tResolution, strong, "2160p", "4k", "uhd", "2160p")
	addVocab(tResolution, strong, "4320p", "8k")
	addVocab(tResolution, strong, "1080p", "fhd")
	addVocab(tVideoCodec, strong, "H.264", "x264", "h264", "h 264", "avc", "x 264")
	addVocab(tVideoCodec, strong, "H.265", "x265", "h265", "h 265", "hevc", "x 265")
	addVocab(tVideoCodec, strong, "XviD", "xvid")
	addVocab(tVideoCodec, strong, "DivX", "divx")
	addVocab(tVideoCodec, strong, "AV1", "av1")
	addVocab(tVideoCodec, strong, "VP9", "vp9")
	addVocab(tVideoCodec, strong, "MPEG-2", "mpeg2", "mpeg 2")
	addVocab(tVideoCodec, strong, "VC-1", "vc1", "vc 1")
	addVocab(tAudioCodec, strong, "AAC", "aac", "he aac", "aac lc")
	addVocab(tAudioCodec, strong, "AC3", "ac3", "ac3d", "ac3ld", "dl ac3", "ac3 dubbed")
	addVocab(tAudioCodec, weak, "AC3", "dd")
	addVocab(tAudioCodec, strong, "EAC3", "eac3", "e ac3", "ddp", "dd+", "ddplus")
	addVocab(tAudioCodec, strong, "DTS", "dts")
	addVocab(tAudioCodec, strong, "DTS-HD", "dts hd", "dtshd", "dts hd ma", "dtshd ma", "dts ma", "dts x", "dtsx")
	addVocab(tAudioCodec, strong, "TrueHD", "truehd", "true hd")
	addVocab(tAudioCodec, strong, "FLAC", "flac")
	addVocab(tAudioCodec, strong, "MP3", "mp3")
	addVocab(tAudioCodec, weak, "Opus", "opus")
	addVocab(tAudioCodec, strong, "PCM", "lpcm", "pcm")
	for k, v := range map[string]string{"dd": "AC3", "ddp": "EAC3", "dd+": "EAC3", "eac3": "EAC3", "aac": "AAC", "ac3": "AC3", "dts": "DTS", "truehd": "TrueHD", "flac": "FLAC", "opus": "Opus", "lpcm": "PCM"} {
		audioPrefix[k] = v
	}
	addVocab(tOther, strong, "", "atmos", "remux", "repack", "rerip", "readnfo", "read nfo", "nfofix", "dirfix", "syncfix", "subfix",
		"stv", "10bit", "10 bit", "8bit", "hi10p", "hi10", "hdr10", "hdr10+", "hdr", "dovi", "dolby vision", "hfr", "60fps", "sbs", "hsbs",
		"h sbs", "half sbs", "hou", "ws", "widescreen", "fullscreen", "dual audio", "dualaudio", "dl", "vostfr", "vost", "subfrench",
		"hardsub", "hardsubs", "hc", "softsub", "multisub", "multisubs", "nlsubs", "engsub", "subbed", "dubbed", "amzn", "dsnp", "hmax",
		"atvp", "pcok", "itunes", "bt 2020", "rec 2020", "rec 709", "sdr", "xxx", "rarbg", "ettv", "eztv", "yify", "yts", "doku", "docu",
		"hsbs3d", "sbs3d", "3d hsbs", "3d sbs", "3d hou")
	addVocab(tOther, weak, "", "proper", "real", "internal", "limited", "convert", "complete", "festival", "retail", "rip", "sample",
		"hd", "sd", "nf", "hulu", "3d", "dv", "uncensored", "dual", "sub", "subs", "fs", "ma")
	addVocab(tEdition, strong, "Director's Cut", "directors cut", "director's cut", "directorscut", "dircut", "directors edition", "director cut",
		"director s cut", "edition director")
	addVocab(tEdition, weak, "Director's Cut", "dc")
	addVocab(tEdition, strong, "Extended", "extended cut", "extended edition", "extended version")
	addVocab(tEdition, weak, "Extended", "extended")
	addVocab(tEdition, strong, "Criterion", "criterion edition", "criterion collection")
	addVocab(tEdition, weak, "Criterion", "criterion")
	addVocab(tEdition, strong, "Special", "special edition")
	addVocab(tEdition, weak, "Special", "se")
	addVocab(tEdition, strong, "Collector's", "collectors edition", "collector's edition", "collector edition", "edition collector",
		"edition collectors")
	addVocab(tEdition, strong, "Ultimate", "ultimate edition", "ultimate cut")
	addVocab(tEdition, strong, "Anniversary", "anniversary edition")
	addVocab(tEdition, strong, "Theatrical", "theatrical cut", "theatrical edition", "theatrical version")
	addVocab(tEdition, weak, "Theatrical", "theatrical")
	addVocab(tEdition, weak, "Unrated", "unrated")
	addVocab(tEdition, weak, "Uncut", "uncut")
	addVocab(tEdition, weak, "Remastered", "remastered", "remaster")
	addVocab(tEdition, strong, "IMAX", "imax")
	addVocab(tEdition, weak, "Final Cut", "final cut")
	addLangs()
}

// addLangs fills the language words; values are ISO 639-2/B codes, as
// ffprobe reports stream languages, and "mul" for several.
func addLangs() {
	const strong, weak = false, true
	for _, l := range []struct {
		code    string
		words   string // title words too ("French Kiss"): count only as technical
		codes   string // release-name spellings that are no title words
		bracket string // two-letter codes, only inside brackets
	}{
		{"eng", "english", "eng", "en"},
		{"fre", "french", "truefrench vff vfq vf vf2 vfi fre fra", "fr"},
		{"ger", "german deutsch", "ger deu", "de"},
		{"spa", "spanish castellano latino español", "spa esp", "es"},
		{"ita", "italian", "ita", "it"},
		{"jpn", "japanese", "jpn jap", "ja jp"},
		{"kor", "korean", "kor", "ko kr"},
		{"chi", "chinese mandarin cantonese", "chi chs cht", "zh cn"},
		{"rus", "russian", "rus", "ru"},
		{"por", "portuguese brazilian", "por ptbr", "pt br"},
		{"dut", "dutch flemish", "dut nld", "nl"},
		{"swe", "swedish", "swe", "sv"},
		{"dan", "danish", "dan", "da"},
		{"nor", "norwegian", "nor", "no"},
		{"fin", "finnish", "fin", "fi"},
		{"pol", "polish", "pol", "pl"},
		{"hin", "hindi", "hin", "hi"},
		{"tam", "tamil", "tam", "ta"},
		{"tel", "telugu", "tel", "te"},
		{"tur", "turkish", "tur", "tr"},
		{"ara", "arabic", "ara", "ar"},
		{"heb", "hebrew", "heb", "he"},
		{"cze", "czech", "cze ces", "cs"},
		{"hun", "hungarian", "hun", "hu"},
		{"gre", "greek", "gre ell", "el"},
		{"tha", "thai", "tha", "th"},
		{"vie", "vietnamese", "vie", "vi"},
		{"mul", "multi", "multilang multilingual", ""},
	} {
		for _, w := range fields(l.words) {
			addVocab(tLanguage, weak, l.code, w)
		}
		for _, w := range fields(l.codes) {
			// Three-letter codes are words of some titles too ("Fin"),
			// so they count as technical only where a weak word does.
			addVocab(tLanguage, len(w) <= 3, l.code, w)
		}
		for _, w := range fields(l.bracket) {
			bracketLangs[w] = l.code
		}
	}
	addVocab(tLanguage, strong, "fre", "truefrench", "vff", "vfq", "vf2", "vfi")
	addVocab(tLanguage, strong, "mul", "multilang", "multilingual")
	addVocab(tLanguage, strong, "ger", "german dl", "swissgerman", "swiss german")
	addVocab(tLanguage, strong, "por", "pt br")
}

// fields splits on single spaces without allocating more than the slice.
func fields(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ' ' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// isSep reports whether c separates the tokens of a name.
func isSep(c byte) bool {
	switch c {
	case ' ', '.', '_', '-', '[', ']', '(', ')', '{', '}', '~', ',', '#':
		return true
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
