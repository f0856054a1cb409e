package resolver

import (
	"fmt"
	"strings"

	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// nameMatcher applies a probespec.Matcher (compiled by probespec, so the
// parser and the resolver agree on glob/regex/demangled syntax) with the
// resolver's rules of docs/spec-language.md#what-a-matcher-matches.
type nameMatcher struct {
	kind    probespec.MatcherKind
	pattern string
	c       probespec.Compiled
	pre     prefilter // raw-name test before demangling (demangled, regex)
}

func compileMatcher(m probespec.Matcher) (*nameMatcher, error) {
	c, err := m.Compile()
	if err != nil {
		return nil, fmt.Errorf("bad %s pattern %q: %w", m.Kind, m.Pattern, err)
	}
	return &nameMatcher{kind: m.Kind, pattern: m.Pattern, c: c, pre: newPrefilter(m)}, nil
}

// matchName matches a plain name (kernel functions, tracepoints).
func (m *nameMatcher) matchName(name string) bool { return m.c.Match(name) }

// mayDemangle reports whether matching s may demangle its name (a regex
// only when the raw name does not match).
func (m *nameMatcher) mayDemangle(s *objfile.Symbol) bool {
	switch m.kind {
	case probespec.MatchRegex:
		return objfile.IsMangled(s.Name) && m.pre.admits(s.Name)
	case probespec.MatchDemangled:
		return !s.Fragment && objfile.IsMangled(s.Name) && m.pre.admits(s.Name)
	}
	return false
}

// warm demangles, in parallel, the names of o that matching will demangle,
// when there are many.
func (m *nameMatcher) warm(o *objfile.Object) {
	var idx []int
	for i := range o.Funcs {
		s := &o.Funcs[i]
		if m.mayDemangle(s) && (m.kind != probespec.MatchRegex || !m.c.Match(s.Name)) {
			idx = append(idx, i)
		}
	}
	if len(idx) >= 1024 {
		o.WarmNames(idx)
	}
}

// matchSymbol applies the ELF rules to o.Funcs[i]: exact and glob on the
// raw name; regex on the raw, then the demangled name (without, then with
// its parameters and return type); demangled patterns on the demangled name
// without and with parameters (unmangled names stand for themselves), never
// on .cold/.part fragments. Names are demangled only when the prefilter
// lets them through.
func (m *nameMatcher) matchSymbol(o *objfile.Object, i int) bool {
	s := &o.Funcs[i]
	switch m.kind {
	case probespec.MatchExact, probespec.MatchGlob:
		return m.c.Match(s.Name)
	case probespec.MatchRegex:
		if m.c.Match(s.Name) {
			return true
		}
		if !m.mayDemangle(s) {
			return false
		}
		full, short := o.DemangledName(i)
		return full != "" && (m.c.Match(short) || m.c.Match(full))
	case probespec.MatchDemangled:
		if s.Fragment || !m.pre.admits(s.Name) {
			return false
		}
		full, short := o.DemangledName(i) // "" when not mangled
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
