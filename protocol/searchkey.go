package protocol

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// SearchTokenPrefix starts the bytes a search token's DHT key hashes: the
// version is part of it, so a later rule derives other keys.
const SearchTokenPrefix = "metamesh/search-token/1"

// SearchTokenKey is the DHT key of a search token: the CIDv1 (codec raw,
// multihash sha2-256) of SearchTokenPrefix, one 0x00 byte, and the token
// as UTF-8. token must be one Tokens gave; whether it carries a key at
// all is Keyed's to say.
func SearchTokenKey(token string) cid.Cid {
	b := make([]byte, 0, len(SearchTokenPrefix)+1+len(token))
	b = append(append(append(b, SearchTokenPrefix...), 0), token...)
	h, err := multihash.Sum(b, multihash.SHA2_256, -1)
	if err != nil {
		panic("sha2-256 is always available: " + err.Error())
	}
	return cid.NewCidV1(cid.Raw, h)
}

// Keyed reports whether a search token carries a DHT key: whether a
// household holding a file with it provides SearchTokenKey(token), and a
// federated search looks its providers up. Tokens that would name most of
// the federation carry none:
//
//   - words of one or two letters or digits ("a", "of", "2");
//   - years: four digits from 1880 to 2099;
//   - season and episode marks, as Tokens writes them ("s01", "e07",
//     "s01e07");
//   - resolutions: digits then "p" or "i" ("720p", "1080i");
//   - the words of unkeyedWords: stop words of the languages the release
//     name parser knows, and the tags of sources, codecs, audio, HDR and
//     containers.
//
// Such a word still narrows a search's hits on the households it asks
// ("heat 1995", "lost s01e01"); it is only not looked up.
func Keyed(token string) bool {
	if utf8.RuneCountInString(token) < 3 || unkeyedWords[token] {
		return false
	}
	if len(token) == 4 && allDigits(token) {
		if y, _ := strconv.Atoi(token); y >= 1880 && y <= 2099 {
			return false
		}
	}
	if _, _, ok := seasonEpisode(token); ok {
		return false
	}
	if n := len(token); n >= 2 && (token[n-1] == 'p' || token[n-1] == 'i') && allDigits(token[:n-1]) {
		return false
	}
	return true
}

// KeyedTokens are the distinct tokens of toks that Keyed keeps, in the
// order they first come.
func KeyedTokens(toks []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range toks {
		if !seen[t] && Keyed(t) {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// unkeyedWords carry no DHT key (Keyed). Only words of three letters or
// more are listed: shorter ones carry none by length.
var unkeyedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		the and for from with without into onto over under about after before
		not but
		les des une aux par pour sur dans avec sans qui que est
		der die das dem den des ein eine einer eines und mit von vom zum zur fur auf aus bei nach
		los las del una con por para sin que
		gli della delle degli dei con per una uno che
		het een van voor met
		dos das uma com para por sem
		mkv mp4 avi m4v mov wmv mpg mpeg webm iso srt sub ass nfo
		bluray bdrip brrip bdremux remux dvd dvdrip dvdr hdtv hdrip webrip webdl web
		x264 x265 h264 h265 hevc avc xvid divx av1 vp9 mpeg2 vc1
		aac ac3 eac3 ddp dts dtshd truehd atmos flac mp3 opus pcm lpcm
		hdr hdr10 dovi sdr uhd fhd 10bit 8bit hi10p
		proper repack rerip internal limited extended unrated remastered
		multi dual dubbed subbed vostfr
	`) {
		m[w] = true
	}
	return m
}()
