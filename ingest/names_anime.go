package ingest

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Anime: what marks a release name as an anime's (a leading [Group]
// with a CRC tag, a known anime release group, Japanese script, an
// Anime folder), the title's script (Japanese, romaji), the Japanese
// episode form "第01話" and a season written "2nd Season".

// animeGroups are release groups that publish anime only, in lower
// case. A group named "…-Raws" (Ohys-Raws, Lilith-Raws) counts too:
// raws are Japanese broadcasts.
var animeGroups = map[string]bool{"subsplease": true, "erai-raws": true, "horriblesubs": true, "judas": true,
	"ember": true, "commie": true, "coalgirls": true, "asw": true, "anime time": true, "nekomoe kissaten": true,
	"kaleido-subs": true, "mtbb": true, "neohevc": true, "doki": true, "gg": true, "damedesuyo": true,
	"golumpa": true, "dkb": true, "sallysubs": true, "gjm": true, "underwater": true, "vivid": true,
	"chihiro": true, "mezashite": true, "yameii": true, "moozzi2": true, "reinforce": true, "bakedfish": true,
	"hatsuyuki": true, "utw": true, "thora": true, "kametsu": true, "cbm": true, "vcb-studio": true,
	"tenrai-sensei": true, "anime land": true, "sakurato": true, "kawaiika-raws": true, "beatrice-raws": true,
	"leopard-raws": true, "ohys-raws": true, "lilith-raws": true, "nc-raws": true, "subsplus+": true,
	"anime-time": true, "animetime": true, "fff": true, "hiryuu": true, "frostii": true, "mazui": true}

// readAnime sets r.Anime when stem (in the folders dirs, read into ctx)
// carries anime's marks, and r.CRC from a CRC tag. A CRC tag marks an
// anime only with a leading [Group]: fansub groups name their files
// "[Group] Show - 12 [ABCD1234]".
// jp says the name numbers its episode the Japanese way ("第01話").
func readAnime(stem string, ctx nameCtx, jp bool, r *Release) {
	r.CRC = crcTag(stem)
	var buf [24]byte
	group := buf[:0]
	if len(r.Group) <= len(buf) {
		for i := 0; i < len(r.Group); i++ {
			group = append(group, lowerASCII(r.Group[i]))
		}
	}
	r.Anime = ctx.anime || animeGroups[string(group)] || bytes.HasSuffix(group, []byte("raws")) ||
		r.CRC != "" && strings.HasPrefix(stem, "[") || jp || kana(stem)
}

// crcTag is the CRC-32 a fansub group puts in a name's brackets
// ("[ABCD1234]", "(1a2b3c4d)"), in capitals; "" when there is none.
func crcTag(s string) string {
	for i := 0; i+10 <= len(s); i++ {
		if (s[i] != '[' && s[i] != '(') || (s[i+9] != ']' && s[i+9] != ')') {
			continue
		}
		tag := s[i+1 : i+9]
		if isHex(tag) {
			return strings.ToUpper(tag)
		}
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := lowerASCII(s[i])
		if !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// kana reports hiragana or katakana in s: Japanese, where ideographs
// alone may be Chinese.
func kana(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			continue
		}
		for _, c := range s[i:] {
			if unicode.In(c, unicode.Hiragana, unicode.Katakana) {
				return true
			}
		}
		return false
	}
	return false
}

// japanese reports Japanese script in a title: kana, or ideographs.
func japanese(s string) bool {
	for _, c := range s {
		if unicode.In(c, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			return true
		}
	}
	return false
}

// japaneseEpisode reads a name written the Japanese way, "呪術廻戦 第24話
// 「素材」": the text before 第 (the title, maybe after a [Group]), the
// episode number before 話 (ASCII or full-width digits) and the episode
// title in 「」 after it. ok is false for any other name.
func japaneseEpisode(stem string) (before string, episode int, title string, ok bool) {
	const dai, wa = "第", "話"
	i := strings.Index(stem, dai)
	if i < 0 {
		return "", 0, "", false
	}
	rest := stem[i+len(dai):]
	n, digits := 0, 0
	for rest != "" {
		c, size := utf8.DecodeRuneInString(rest)
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		case c >= '０' && c <= '９':
			n = n*10 + int(c-'０')
		default:
			size = 0
		}
		if size == 0 || digits >= 5 {
			break
		}
		rest, digits = rest[size:], digits+1
	}
	if digits == 0 || !strings.HasPrefix(rest, wa) {
		return "", 0, "", false
	}
	rest = strings.TrimSpace(rest[len(wa):])
	if a, ok := strings.CutPrefix(rest, "「"); ok {
		if b, _, ok := strings.Cut(a, "」"); ok {
			title = strings.TrimSpace(b)
		}
	}
	return strings.TrimSpace(stem[:i]), n, title, true
}

// ordinalSeason takes a season written "2nd Season" off the end of r's
// title ("Oshi no Ko 2nd Season - 03": season 2).
func ordinalSeason(r *Release) {
	t, ok := strings.CutSuffix(r.Title, " Season")
	if !ok || r.Season >= 0 {
		return
	}
	i := strings.LastIndexByte(t, ' ')
	if i < 1 || len(t)-i < 4 {
		return
	}
	w := strings.ToLower(t[i+1:])
	num, suffix := w[:len(w)-2], w[len(w)-2:]
	n := 0
	for j := 0; j < len(num); j++ {
		if !isDigit(num[j]) || j >= 2 {
			return
		}
		n = n*10 + int(num[j]-'0')
	}
	if n == 0 || (suffix != "st" && suffix != "nd" && suffix != "rd" && suffix != "th") {
		return
	}
	r.Title, r.Season = t[:i], n
}

// romaji reports a title written in romaji, the Latin spelling of
// Japanese ("Shingeki no Kyojin", "Kimetsu no Yaiba"): each word made of
// Japanese syllables, or, with a particle (no, wa, ga, wo, ni, ...)
// among its words, most of them ("Boku no Hero Academia").
func romaji(title string) bool {
	words, syllabic, particle := 0, 0, false
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(c rune) bool { return !unicode.IsLetter(c) }) {
		if w[0] >= utf8.RuneSelf {
			return false
		}
		words++
		if syllables(w) {
			syllabic++
		}
		switch w {
		case "no", "wa", "ga", "wo", "ni", "de", "to", "mo", "na", "kara", "made":
			particle = particle || words > 1
		}
	}
	return words > 0 && (syllabic == words || particle && 2*syllabic > words)
}

// syllables reports a lower-case word that splits into the syllables
// of Hepburn romanisation: a vowel, n, a consonant (doubled or not)
// and a vowel, a palatal (kya, sho, chu, ja) or shi, chi, tsu, fu.
func syllables(w string) bool {
	vowel := func(c byte) bool { return c == 'a' || c == 'i' || c == 'u' || c == 'e' || c == 'o' }
	for i := 0; i < len(w); {
		c := w[i]
		if vowel(c) {
			i++
			continue
		}
		if c == 'n' && (i+1 == len(w) || !vowel(w[i+1]) && w[i+1] != 'y') {
			i++ // the syllabic n
			continue
		}
		if i+1 < len(w) && w[i+1] == c && c != 'n' || c == 't' && strings.HasPrefix(w[i+1:], "ch") {
			i++ // a doubled consonant: "Shippuden", "Matcha"
			continue
		}
		j := i + 1
		switch {
		case strings.HasPrefix(w[i:], "sh"), strings.HasPrefix(w[i:], "ch"), strings.HasPrefix(w[i:], "ts"):
			j = i + 2
		case strings.IndexByte("kgsztdnhbpmryjfw", c) < 0:
			return false
		}
		if j < len(w) && w[j] == 'y' && strings.IndexByte("kgnhbpmr", c) >= 0 && j == i+1 {
			j++ // kya, ryo
		}
		if j >= len(w) || !vowel(w[j]) {
			return false
		}
		if c == 'w' && w[j] != 'a' && w[j] != 'o' || c == 'y' && (w[j] == 'i' || w[j] == 'e') {
			return false
		}
		i = j + 1
	}
	return true
}
