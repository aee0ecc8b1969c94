package storetest

// The search benchmarks' library (store.BenchmarkSearchIndex): n
// titles of three words, each word in 10 titles whatever n is, so a query
// matches as many titles at 1,000 as at 100,000 and the figures show what
// the library's size costs, not what more matches cost. Words are of
// letters and of one width, so a word's prefix (the word but its last
// letter) stands for that word alone, and a typo of it (two letters
// swapped) is one edit from it.

// CorpusTitle is the i-th of n titles.
func CorpusTitle(n, i int) [3]string {
	v := max(n/10, 1)
	return [3]string{"alpha" + letters(i%v), "beta" + letters((i*7+1)%v), "gamma" + letters((i*13+2)%v)}
}

// letters writes k in four letters and a closing "q" (base 26, a fixed
// width): words of letters, as titles are, which a typo can be made in.
// k is spread over the 26⁴ words first (a permutation), so that few words
// are one letter apart, as in real titles.
func letters(k int) string {
	k = (k*7919 + 13) % (26 * 26 * 26 * 26)
	b := []byte("aaaaq")
	for i := 3; i >= 0; i-- {
		b[i] = byte('a' + k%26)
		k /= 26
	}
	return string(b)
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
