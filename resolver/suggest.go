package resolver

import (
	"fmt"
	"sort"
	"strings"

	"github.com/probee/probee/internal/editdist"
)

// NoMatchError says that a spec matched nothing, where it looked, and the
// nearest names there.
type NoMatchError struct {
	What        string // "function", "kernel function", "tracepoint"
	Pattern     string
	Where       string   // e.g. "libc.so.6", "pid 1234", "available_filter_functions"
	Suggestions []string // up to 5 nearest names
}

func (e *NoMatchError) Error() string {
	s := fmt.Sprintf("no %s matches %q in %s", e.What, e.Pattern, e.Where)
	if len(e.Suggestions) > 0 {
		s += "; did you mean: " + strings.Join(e.Suggestions, ", ")
	}
	return s
}

const maxSuggestions = 5

// suggest returns up to 5 names near pattern: within a small edit distance
// of its literal part, or sharing a prefix of at least 4 characters, best
// first.
func suggest(pattern string, names []string) []string {
	lit := strings.ToLower(literalPart(pattern))
	if lit == "" {
		return nil
	}
	maxDist := max(2, len(lit)/3)
	type cand struct {
		name         string
		dist, prefix int
	}
	var cs []cand
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		ln := strings.ToLower(n)
		p := commonPrefix(lit, ln)
		if p < min(4, len(lit)) && absDiff(len(ln), len(lit)) > maxDist {
			continue
		}
		d := editdist.Distance(lit, ln)
		if d <= maxDist || p >= min(4, len(lit)) {
			if p >= min(4, len(lit)) {
				d-- // a shared prefix is worth one edit
			}
			cs = append(cs, cand{n, d, p})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		if cs[i].prefix != cs[j].prefix {
			return cs[i].prefix > cs[j].prefix
		}
		if li, lj := absDiff(len(cs[i].name), len(lit)), absDiff(len(cs[j].name), len(lit)); li != lj {
			return li < lj
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < maxSuggestions; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// literalPart is the pattern up to its first glob or regex metacharacter.
func literalPart(p string) string {
	p = strings.TrimPrefix(p, "^")
	if i := strings.IndexAny(p, "*?[{()|$+\\"); i >= 0 {
		return p[:i]
	}
	return p
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}
