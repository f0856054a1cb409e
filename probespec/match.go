package probespec

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/gobwas/glob"
)

// Compiled is a matcher ready to test symbol names. The zero value matches
// nothing.
type Compiled struct {
	kind    MatcherKind
	exact   string // MatchExact: the name; MatchDemangled: the literal text, if literal
	literal bool   // MatchDemangled: the pattern has no glob metacharacter
	g       *glob.Pattern
	re      *regexp.Regexp
}

// Compile checks the pattern's syntax and compiles it:
//   - MatchExact: string equality;
//   - MatchGlob: a gobwas glob, anchored at both ends, '*' crossing any char;
//   - MatchRegex: an unanchored Go RE2 regexp;
//   - MatchDemangled: a gobwas glob over the pattern in which C++/Rust name
//     parts that look like glob syntax are literal: operator[], operator*,
//     operator*=, operator->*, operator new[]/delete[], ABI tags [abi:TAG]
//     and {...} groups containing '#' ({lambda(int)#1}, {closure#0}).
//
// The error says what is wrong with the pattern, e.g. `invalid regex "(":
// missing closing )`.
func (m Matcher) Compile() (c Compiled, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = Compiled{}, fmt.Errorf("invalid %s pattern %q: %v", m.Kind, m.Pattern, r)
		}
	}()
	if m.Pattern == "" {
		return Compiled{}, fmt.Errorf("empty %s pattern", m.Kind)
	}
	c.kind = m.Kind
	switch m.Kind {
	case MatchExact:
		c.exact, c.literal = m.Pattern, true
	case MatchGlob:
		c.g, err = compileGlob(m.Pattern, m.Pattern)
	case MatchRegex:
		c.re, err = compileRegex(m.Pattern)
	case MatchDemangled:
		src, lit, isLit := demangleGlob(m.Pattern)
		c.exact, c.literal = lit, isLit
		c.g, err = compileGlob(src, m.Pattern)
	default:
		err = fmt.Errorf("invalid matcher kind %d", int(m.Kind))
	}
	if err != nil {
		return Compiled{}, err
	}
	return c, nil
}

// Match reports whether name matches. For MatchDemangled, a literal pattern
// (no glob metacharacter) also matches when it is a "::"-aligned suffix of
// name (docs/spec-language.md#what-a-matcher-matches): "Klass::method" matches "ns::Klass::method".
// The resolver calls Match on the qualified name without parameters and on
// the full signature.
func (c Compiled) Match(name string) bool {
	switch c.kind {
	case MatchExact:
		return name == c.exact
	case MatchGlob:
		return c.g.Match(name)
	case MatchRegex:
		return c.re.MatchString(name)
	case MatchDemangled:
		if c.g.Match(name) {
			return true
		}
		return c.literal && strings.HasSuffix(name, "::"+c.exact)
	}
	return false
}

// Literal reports whether the matcher has no wildcard: exact matchers and
// demangled patterns without glob metacharacters.
func (c Compiled) Literal() bool { return c.literal }

// patternError is a Compile error; off is a byte offset into the pattern
// (or -1 when unknown) so Parse can point its caret at it.
type patternError struct {
	off int
	msg string
}

func (e *patternError) Error() string { return e.msg }

// compileGlob compiles src, reporting errors against shown (the pattern as
// written); offsets are kept only when src is shown.
func compileGlob(src, shown string) (*glob.Pattern, error) {
	g, err := glob.Compile(src)
	if err == nil {
		return g, nil
	}
	pe := &patternError{off: -1, msg: fmt.Sprintf("invalid glob %q: %s", shown, strings.TrimPrefix(err.Error(), "glob: "))}
	var se *glob.SyntaxError
	if errors.As(err, &se) {
		pe.msg = fmt.Sprintf("invalid glob %q: %s", shown, se.Reason)
		if src == shown {
			pe.off = se.Offset
		}
	}
	return nil, pe
}

func compileRegex(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err == nil {
		return re, nil
	}
	var se *syntax.Error
	if errors.As(err, &se) {
		off := -1
		if se.Expr != "" {
			off = strings.Index(p, se.Expr)
		}
		return nil, &patternError{off: off, msg: fmt.Sprintf("invalid regex %q: %s", p, se.Code)}
	}
	return nil, &patternError{off: -1, msg: fmt.Sprintf("invalid regex %q: %v", p, err)}
}

// operatorTails are the glob-looking operator names, longest first.
var operatorTails = []string{"->*", "*=", "*", "[]", " new[]", " delete[]"}

// demangleGlob translates a demangled pattern to gobwas syntax. It returns
// the glob source, the unescaped literal text and whether the pattern is
// literal (no wildcard left).
func demangleGlob(p string) (src, lit string, literal bool) {
	var b, t strings.Builder
	literal = true
	for i := 0; i < len(p); {
		n := literalRun(p, i)
		if n > 0 {
			writeQuoted(&b, p[i:i+n])
			t.WriteString(p[i : i+n])
			i += n
			continue
		}
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			t.WriteByte(p[i+1])
			i += 2
			continue
		case strings.IndexByte("*?[{", c) >= 0:
			literal = false
		}
		b.WriteByte(c)
		t.WriteByte(c)
		i++
	}
	return b.String(), t.String(), literal
}

// literalRun returns the length of a name part at p[i:] that must match
// literally, or 0.
func literalRun(p string, i int) int {
	rest := p[i:]
	if strings.HasPrefix(rest, "operator") && (i == 0 || !isIdent(p[i-1])) {
		for _, tail := range operatorTails {
			if strings.HasPrefix(rest[len("operator"):], tail) {
				return len("operator") + len(tail)
			}
		}
	}
	if strings.HasPrefix(rest, "[abi:") {
		if k := strings.IndexByte(rest, ']'); k > 0 {
			return k + 1
		}
	}
	if rest[0] == '{' {
		if k := strings.IndexByte(rest, '}'); k > 0 && strings.IndexByte(rest[1:k], '{') < 0 && strings.IndexByte(rest[:k], '#') > 0 {
			return k + 1
		}
	}
	return 0
}

// writeQuoted writes s with every gobwas metacharacter escaped.
func writeQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]{},!\-`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
}
