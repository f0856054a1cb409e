package probespec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher lexes PATTERN ["+" offset] in [p, hi). mk is the keyword's matcher
// kind, or MatchNone for a bare (auto-classified) pattern. The offset is a
// trailing "+NUMBER"; any other '+' must belong to an operator+ name.
func (l *lx) matcher(p, hi int, mk MatcherKind) *Error {
	end := hi
	if q := strings.LastIndexByte(l.in[p:hi], '+'); q > 0 && isNumber(l.in[p+q+1:hi]) {
		end = p + q
	}
	if err := l.checkPlus(p, end, hi); err != nil {
		return err
	}
	if err := l.checkName(p, end, mk); err != nil {
		return err
	}
	l.tok(tokPattern, p, end)
	if end < hi {
		return l.offset(end, hi)
	}
	return nil
}

// checkPlus rejects a '+' in the name [p, end) that is not part of
// operator+, operator++ or operator+=. When it is the last '+' of the whole
// matcher it was meant as an offset, and the error says so.
func (l *lx) checkPlus(p, end, hi int) *Error {
	name := l.in[p:end]
	for j := 0; j < len(name); j++ {
		if name[j] != '+' || afterOperator(name, j) {
			continue
		}
		at := p + j
		switch {
		case j == 0:
			return l.fail(at, "give a function before the offset, e.g. malloc+0x10", "missing function before '+'")
		case strings.IndexByte(l.in[at+1:hi], '+') < 0:
			return l.offset(at, hi) // always an error here: the suffix is no number
		}
		return l.fail(at, "only operator+ names contain '+'; an offset comes last: NAME+0x10", "unexpected '+' in name")
	}
	return nil
}

// afterOperator reports whether name[j] ('+') directly follows the word
// "operator" or "operator+" (operator+, operator++, operator+=).
func afterOperator(name string, j int) bool {
	head := name[:j]
	head = strings.TrimSuffix(head, "operator+")
	if len(head) == j {
		head = strings.TrimSuffix(head, "operator")
		if len(head) == j {
			return false
		}
	}
	return head == "" || !isIdent(head[len(head)-1])
}

// checkName applies the rules of a pattern in [p, end): bare patterns have
// no separator colon, do not end in '/' and are not numbers; whitespace is
// allowed only inside demangled and regex patterns.
func (l *lx) checkName(p, end int, mk MatcherKind) *Error {
	name := l.in[p:end]
	if mk == MatchNone {
		if i := l.nextSep(p, end); i >= 0 {
			return l.fail(i, hintColon, "unexpected ':'")
		}
		if strings.HasSuffix(name, "/") {
			return l.fail(end-1, "a regex is written /RE/", "unexpected '/' at the end of a name")
		}
		if allDigits(name) {
			return l.fail(p, "for a source line write FILE:LINE, e.g. main.c:42", "function name %q is a number", name)
		}
		mk = classify(name)
	}
	i := indexSpace(name)
	if i < 0 {
		return nil
	}
	if mk == MatchDemangled {
		r, n := utf8.DecodeLastRuneInString(name)
		switch {
		case i == 0:
		case unicode.IsSpace(r):
			i = len(name) - n
		default:
			return nil // inner whitespace of a demangled signature
		}
	}
	return l.fail(p+i, hintSpace, "unexpected whitespace")
}

// classify implements the bare-name rule of docs/spec-language.md#matchers.
func classify(name string) MatcherKind {
	switch {
	case strings.Contains(name, "::") || strings.Contains(name, "("):
		return MatchDemangled
	case strings.ContainsAny(name, "*?[{"):
		return MatchGlob
	}
	return MatchExact
}

func hasPathPrefix(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

var sourceExts = []string{".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".rs", ".go", ".s", ".S", ".zig"}

// hasSourceExt reports whether s names a source file: no ':' and one of the
// source extensions after a non-empty stem.
func hasSourceExt(s string) bool {
	if strings.Contains(s, ":") {
		return false
	}
	for _, ext := range sourceExts {
		if len(s) > len(ext) && strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

// validName reports whether s is a non-empty ASCII name of letters, digits
// and extra characters, starting with a letter, digit or '_'.
func validName(s, extra string) bool {
	if s == "" || !isIdent(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdent(c byte) bool { return isAlnum(c) || c == '_' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isNumber reports whether s is an offset's syntax: decimal digits or 0x/0X
// followed by hex digits. Its range is checked by the builder.
func isNumber(s string) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return allDigits(s)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// indexSpace returns the byte index of the first whitespace rune in s, or -1.
func indexSpace(s string) int { return strings.IndexFunc(s, unicode.IsSpace) }
