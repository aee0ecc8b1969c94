package store

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How a query's words match the index (search.lua). Each word matches the
// tokens equal to it (exact), the tokens it begins once it has two letters
// (prefix: "light" finds "lighthouse", so the page can search as the
// person types), and, from five letters, the tokens one edit away
// (insertion, deletion, substitution or transposition: "lighthuose"
// finds "lighthouse"; a word holding a digit is a number, never a typo). A hit holding every word exactly ranks before one
// holding every word by prefix or edit, and both before one holding some
// words. "1x02" is read as "s01e02", the token an episode is indexed
// under; a leading article ("the", "le", "der", …) is dropped when other
// words follow, so "the lighthouse keepers" finds "Lighthouse Keepers".

// Matching limits.
const (
	// minPrefix and minFuzzy are the shortest words, in letters, matched
	// by prefix and one edit away.
	minPrefix = 2
	minFuzzy  = 5
	// maxPrefixTokens bounds the tokens one word's prefix expands to
	// (the first in byte order): a short prefix of a large library
	// narrows as the person types on.
	maxPrefixTokens = 64
	// maxFuzzyWords bounds the words matched one edit away.
	maxFuzzyWords = 4
)

// vocabularyKey is the sorted set of every token something is posted
// under (lua/common.lua): prefixes are ranges of it (ZRANGEBYLEX), and
// the edits of a word are looked up in it (ZMSCORE).
const vocabularyKey = "tk:__vocab__"

// queryWord is one word of a query and what it matches.
type queryWord struct {
	token  string
	prefix bool
	// edits are the tokens one edit away from token, for a word of
	// minFuzzy letters or more.
	edits []string
}

// articles are the leading articles of titles in the languages the name
// parser reads (English, French, German, Spanish, Italian, Portuguese,
// Dutch), as tokens.
var articles = map[string]bool{
	"the": true, "a": true, "an": true,
	"le": true, "la": true, "les": true, "l": true, "un": true, "une": true,
	"der": true, "die": true, "das": true, "ein": true, "eine": true,
	"el": true, "los": true, "las": true, "una": true,
	"il": true, "lo": true, "gli": true, "i": true, "uno": true,
	"o": true, "os": true, "as": true, "um": true, "uma": true,
	"het": true, "een": true, "de": true,
}

// crossEpisode is an episode written NxMM ("1x02").
var crossEpisode = regexp.MustCompile(`^([0-9]{1,3})x([0-9]{1,4})$`)

// queryWords cuts q into its words: distinct tokens, at most
// maxQueryTokens, NxMM read as sNNeMM, a leading article dropped when
// other words follow.
func queryWords(q string) []queryWord {
	toks := Tokens(q)
	if len(toks) > 1 && articles[toks[0]] {
		toks = toks[1:]
	}
	var out []queryWord
	seen := map[string]bool{}
	fuzzy := 0
	for _, t := range toks {
		if m := crossEpisode.FindStringSubmatch(t); m != nil {
			s, _ := strconv.Atoi(m[1])
			e, _ := strconv.Atoi(m[2])
			t = fmt.Sprintf("s%02de%02d", s, e)
		}
		if seen[t] || len(out) == maxQueryTokens {
			continue
		}
		seen[t] = true
		w := queryWord{token: t, prefix: utf8.RuneCountInString(t) >= minPrefix}
		if utf8.RuneCountInString(t) >= minFuzzy && fuzzy < maxFuzzyWords && letters(t) {
			w.edits = edits(t)
			fuzzy++
		}
		out = append(out, w)
	}
	return out
}

// wordTokens are the words' tokens, for the cursor.
func wordTokens(ws []queryWord) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.token
	}
	return out
}

// letters reports a word of letters only: a word holding a digit (a
// year, an episode mark, a number) is never matched one edit away, which
// would make it another number.
func letters(t string) bool {
	for _, r := range t {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// edits are the distinct strings one edit away from t (a deletion, a
// transposition of neighbours, a substitution or an insertion of a letter
// of a-z or t's own), t itself left out.
func edits(t string) []string {
	rs := []rune(t)
	alphabet := []rune("abcdefghijklmnopqrstuvwxyz")
	for _, r := range rs {
		if !strings.ContainsRune(string(alphabet), r) {
			alphabet = append(alphabet, r)
		}
	}
	seen := map[string]bool{t: true}
	var out []string
	add := func(v []rune) {
		if s := string(v); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	buf := make([]rune, 0, len(rs)+1)
	for i := range rs {
		add(append(append(buf[:0], rs[:i]...), rs[i+1:]...))
		if i+1 < len(rs) {
			v := append(buf[:0], rs...)
			v[i], v[i+1] = v[i+1], v[i]
			add(v)
		}
		for _, a := range alphabet {
			v := append(buf[:0], rs...)
			v[i] = a
			add(v)
		}
	}
	for i := 0; i <= len(rs); i++ {
		for _, a := range alphabet {
			add(append(append(append(buf[:0], rs[:i]...), a), rs[i:]...))
		}
	}
	return out
}

// maxSortKey bounds a root's sort key in bytes: it is an entry of
// fields:<root>, which stays a listpack with entries of at most 64 bytes.
const maxSortKey = 60

// sortKey orders hits that match a query equally well: by title (its
// leading article left out), then season, episode and episode title, as
// a household reads a show's episodes; a root without them first.
func sortKey(s Summary) string {
	num := func(n *int) string {
		if n == nil {
			return ""
		}
		return fmt.Sprintf("%05d", min(*n, 99999))
	}
	title := Tokens(s.Title)
	if len(title) > 1 && articles[title[0]] {
		title = title[1:]
	}
	k := clip(strings.Join(title, " "), 36) + "\x1f" + num(s.Season) + "\x1f" + num(s.Episode) + "\x1f" + strings.Join(Tokens(s.EpisodeTitle), " ")
	return clip(k, maxSortKey)
}

// clip cuts s to at most n bytes, at a rune's boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
