package storetest

import "sync"

// The search benchmarks' library (store.BenchmarkSearchIndex): n
// titles of three words, each word in 10 titles whatever n is, and no
// word one edit from another, so a query matches as many titles at 1,000
// as at 100,000 and the figures show what the library's size costs, not
// what more matches cost. Words are of letters and of one width, so a
// word's prefix (the word but its last letter) stands for that word
// alone, and a typo of it (two letters swapped) is one edit from it.

// CorpusTitle is the i-th of n titles.
func CorpusTitle(n, i int) [3]string {
	v := max(n/10, 1)
	w := corpusWords(v)
	return [3]string{"alpha" + w[i%v], "beta" + w[(i*7+1)%v], "gamma" + w[(i*13+2)%v]}
}

// words holds corpusWords' lists by their length.
var words sync.Map // int → []string

// corpusWords are v words of four letters and a closing "q" (a fixed
// width): words of letters, as titles are, which a typo can be made in.
// They are drawn from the 26⁴ words in a spread order (a permutation),
// leaving out any word one edit from a word already drawn (a letter
// changed, or two neighbouring letters swapped): a query's typo matches
// finds the same titles whatever v is, as the words of a title rarely
// are one letter apart.
func corpusWords(v int) []string {
	if w, ok := words.Load(v); ok {
		return w.([]string)
	}
	out := make([]string, 0, v)
	taken := make(map[string]bool, v)
	near := func(w []byte) bool {
		for i := range 4 {
			c := w[i]
			for l := byte('a'); l <= 'z'; l++ {
				w[i] = l
				if l != c && taken[string(w)] {
					w[i] = c
					return true
				}
			}
			w[i] = c
			if i < 3 && w[i] != w[i+1] {
				w[i], w[i+1] = w[i+1], w[i]
				t := taken[string(w)]
				w[i], w[i+1] = w[i+1], w[i]
				if t {
					return true
				}
			}
		}
		return false
	}
	for k := 0; len(out) < v && k < 26*26*26*26; k++ {
		w := letters(k)
		if near(w) {
			continue
		}
		taken[string(w)] = true
		out = append(out, string(w)+"q")
	}
	words.Store(v, out)
	return out
}

// letters writes the k-th word of four letters in the spread order: k is
// spread over the 26⁴ words (a permutation), so that words drawn in turn
// are far apart.
func letters(k int) []byte {
	k = (k*7919 + 13) % (26 * 26 * 26 * 26)
	b := []byte("aaaa")
	for i := 3; i >= 0; i-- {
		b[i] = byte('a' + k%26)
		k /= 26
	}
	return b
}

// CorpusQueryKinds are the queries the benchmarks time.
var CorpusQueryKinds = []string{"exact", "prefix", "typo", "3words"}

// CorpusQuery is a query of kind for the i-th of n titles: its first
// word whole, but its last letter, with its second and third letters
// swapped ("aplha…"), or its three words.
func CorpusQuery(kind string, n, i int) string {
	t := CorpusTitle(n, i)
	switch kind {
	case "prefix":
		return t[0][:len(t[0])-1]
	case "typo":
		w := []byte(t[0])
		w[1], w[2] = w[2], w[1]
		return string(w)
	case "3words":
		return t[0] + " " + t[1] + " " + t[2]
	}
	return t[0]
}
