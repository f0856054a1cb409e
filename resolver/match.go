package resolver

import (
	"fmt"
	"strings"

	"github.com/probee/probee/probespec"
)

// nameMatcher applies a probespec.Matcher (compiled by probespec, so the
// parser and the resolver agree on glob/regex/demangled syntax) with the
// resolver's rules of docs/spec-language.md#what-a-matcher-matches.
type nameMatcher struct {
	kind    probespec.MatcherKind
	pattern string
	c       probespec.Compiled
}

func compileMatcher(m probespec.Matcher) (*nameMatcher, error) {
	c, err := m.Compile()
	if err != nil {
		return nil, fmt.Errorf("bad %s pattern %q: %w", m.Kind, m.Pattern, err)
	}
	return &nameMatcher{kind: m.Kind, pattern: m.Pattern, c: c}, nil
}

// matchName matches a plain name (kernel functions, tracepoints).
func (m *nameMatcher) matchName(name string) bool { return m.c.Match(name) }

// matchSymbol applies the ELF rules: exact and glob on the raw name; regex
// on the raw, then the demangled name (without, then with its parameters
// and return type); demangled patterns on the demangled name without and
// with parameters (unmangled names stand for themselves), never on
// .cold/.part fragments.
func (m *nameMatcher) matchSymbol(s *Symbol) bool {
	switch m.kind {
	case probespec.MatchExact, probespec.MatchGlob:
		return m.c.Match(s.Name)
	case probespec.MatchRegex:
		return m.c.Match(s.Name) || (s.Demangled != "" && (m.c.Match(s.Short) || m.c.Match(s.Demangled)))
	case probespec.MatchDemangled:
		if s.Fragment {
			return false
		}
		full, short := s.Demangled, s.Short
		if full == "" {
			full, short = s.Name, s.Name
		}
		if m.c.Match(short) || m.c.Match(full) {
			return true
		}
		// A literal pattern with parameters also matches after a return
		// type: "ns::twice<int>(int)" in "int ns::twice<int>(int)".
		return m.c.Literal() && strings.HasSuffix(full, " "+m.pattern)
	}
	return false
}
