// Package editdist measures how far apart two short words are, for the
// "did you mean" of messages (a mistyped flag, kind word or function
// name). Written here: twenty lines, where a library would bring more
// than it gives.
package editdist

// Distance is the edit distance of a and b, in bytes: the letters to
// leave out, add or change, or neighbours to swap, to make one the other
// (Levenshtein's, with a swap as one edit: optimal string alignment).
func Distance(a, b string) int {
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// Nearest is the word of words nearest to w within max edits (the first
// in sorted order among equals), or "".
func Nearest(w string, words []string, max int) string {
	best, dist := "", max+1
	for _, c := range words {
		if d := Distance(w, c); d < dist || d == dist && c < best {
			best, dist = c, d
		}
	}
	return best
}
