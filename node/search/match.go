package search

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/metamesh/node/protocol"
	"github.com/metamesh/node/store"
)

// How a query's words match the index (TextIndex.Search). Each word
// matches the tokens equal to it (exact), the tokens it begins once it
// has two letters (prefix: "light" finds "lighthouse", so the page can
// search as the person types), and, from five letters, the tokens one
// edit away (insertion, deletion, substitution or transposition:
// "lighthuose" finds "lighthouse"; a word holding a digit is a number,
// never a typo). A hit holding every word exactly ranks before one
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
	// maxQueryWords bounds the words a query is cut into, maxFuzzyWords
	// those matched one edit away.
	maxQueryWords = 16
	maxFuzzyWords = 4
)

// queryWord is one word of a query and how it matches.
type queryWord struct {
	token         string
	prefix, fuzzy bool
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
// maxQueryWords, NxMM read as sNNeMM, a leading article dropped when
// other words follow.
func queryWords(q string) []queryWord {
	toks := protocol.Tokens(q)
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
		if seen[t] || len(out) == maxQueryWords {
			continue
		}
		seen[t] = true
		n := utf8.RuneCountInString(t)
		w := queryWord{token: t, prefix: n >= minPrefix}
		if n >= minFuzzy && fuzzy < maxFuzzyWords && letters(t) {
			w.fuzzy = true
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

// swaps are t with two neighbouring letters swapped, each way it can be.
func swaps(t string) []string {
	rs := []rune(t)
	var out []string
	for i := 0; i+1 < len(rs); i++ {
		if rs[i] == rs[i+1] {
			continue
		}
		v := append([]rune{}, rs...)
		v[i], v[i+1] = v[i+1], v[i]
		out = append(out, string(v))
	}
	return out
}

// oneEdit reports whether a is b with one letter inserted, deleted,
// changed, or two neighbours swapped.
func oneEdit(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) < len(y) {
		x, y = y, x
	}
	switch len(x) - len(y) {
	case 0:
		var diff []int
		for i := range x {
			if x[i] != y[i] {
				diff = append(diff, i)
			}
		}
		switch len(diff) {
		case 1:
			return true
		case 2:
			i, j := diff[0], diff[1]
			return j == i+1 && x[i] == y[j] && x[j] == y[i]
		}
		return false
	case 1:
		i := 0
		for i < len(y) && x[i] == y[i] {
			i++
		}
		return string(x[i+1:]) == string(y[i:])
	}
	return false
}

// maxSortKey bounds a root's sort key in bytes.
const maxSortKey = 60

// sortKey orders hits that match a query equally well: by title (its
// leading article left out), then season, episode and episode title, as
// a household reads a show's episodes; a root without them first.
func sortKey(s store.Summary) string {
	num := func(n *int) string {
		if n == nil {
			return ""
		}
		return fmt.Sprintf("%05d", min(*n, 99999))
	}
	title := protocol.Tokens(s.Title)
	if len(title) > 1 && articles[title[0]] {
		title = title[1:]
	}
	k := clip(strings.Join(title, " "), 36) + "\x1f" + num(s.Season) + "\x1f" + num(s.Episode) + "\x1f" + strings.Join(protocol.Tokens(s.EpisodeTitle), " ")
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

// A cursor is base64url(offset (uvarint) ‖ the first 8 bytes of
// sha256(the query's words)): opaque to clients, bound to its query.
func writeCursor(offset int, toks []string) string {
	b := binary.AppendUvarint(nil, uint64(offset))
	return base64.RawURLEncoding.EncodeToString(append(b, queryHash(toks)...))
}

func readCursor(c string, toks []string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(c) > 32 {
		return 0, fmt.Errorf("%w: not one this node wrote", ErrInvalidCursor)
	}
	off, n := binary.Uvarint(b)
	if n <= 0 || off > 1<<31 || string(b[n:]) != string(queryHash(toks)) {
		return 0, fmt.Errorf("%w: not one of this query", ErrInvalidCursor)
	}
	return int(off), nil
}

func queryHash(toks []string) []byte {
	h := sha256.Sum256([]byte(strings.Join(toks, "\x00")))
	return h[:8]
}
