package probespec

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

const hintUSDT = "write usdt:[TARGET:][PROVIDER:]NAME, e.g. usdt:/usr/bin/python3.11:python:function__entry"

// usdtBody lexes [target ":"] [provider ":"] name. Every ':' separates
// (USDT names hold none); a target is a path, or the first of three parts.
func (l *lx) usdtBody(lo, hi int) *Error {
	if lo == hi {
		return l.fail(hi, hintUSDT, "missing probe name")
	}
	if hasPathPrefix(l.in[lo:hi]) {
		return l.usdtPath(lo, hi)
	}
	parts := strings.Count(l.in[lo:hi], ":") + 1
	first, _, _ := strings.Cut(l.in[lo:hi], ":")
	switch {
	case strings.Contains(first, "/"):
		return l.fail(lo, fmt.Sprintf("write %q: paths start with /, ./ or ../", "./"+first), "relative path %q", first)
	case parts > 3:
		i := lo + nthColon(l.in[lo:hi], 3)
		return l.fail(i, hintUSDT, "too many parts: a usdt spec has at most TARGET, PROVIDER and NAME")
	case parts < 3:
		return l.usdtNames(lo, hi)
	}
	i := lo + len(first)
	if !validName(first, "._+-") {
		return l.fail(lo, "library names are letters, digits and . _ + -, e.g. libjvm", "invalid library name %q", first)
	}
	l.tok(tokUSDTLib, lo, i)
	l.tok(tokColon, i, i+1)
	return l.usdtNames(i+1, hi)
}

// nthColon returns the index of the n-th ':' (0-based) in s.
func nthColon(s string, n int) int {
	i := -1
	for range n + 1 {
		i += 1 + strings.IndexByte(s[i+1:], ':')
	}
	return i
}

// usdtPath lexes a body starting with a path: the path ends at the first
// ':' whose remainder is a valid [provider ":"] name, so a path may hold
// ':' ("/opt/a:b/app:fx:probe" has the path "/opt/a:b/app"). A remainder
// holds at most one ':', so only the last two are tried.
func (l *lx) usdtPath(lo, hi int) *Error {
	var last *Error
	i := strings.LastIndexByte(l.in[lo:hi], ':')
	if j := strings.LastIndexByte(l.in[lo:lo+max(i, 0)], ':'); j >= 0 {
		i = j
	}
	for ; i >= 0 && lo+i < hi; i = nextColon(l.in[lo:hi], i) {
		names, err := l.try(func() *Error { return l.usdtNames(lo+i+1, hi) })
		if err != nil {
			last = err
			continue
		}
		if r, n := utf8.DecodeLastRuneInString(l.in[lo : lo+i]); unicode.IsSpace(r) {
			return l.fail(lo+i-n, "remove the whitespace before ':'", "path ends in whitespace")
		}
		l.tok(tokUSDTPath, lo, lo+i)
		l.tok(tokColon, lo+i, lo+i+1)
		l.toks = append(l.toks, names...)
		return nil
	}
	if last != nil {
		return last
	}
	return l.fail(hi, hintUSDT, "missing probe name after path %q", l.in[lo:hi])
}

// nextColon returns the index of the first ':' in s after i, or -1.
func nextColon(s string, i int) int {
	j := strings.IndexByte(s[i+1:], ':')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// usdtNames lexes [provider ":"] name.
func (l *lx) usdtNames(lo, hi int) *Error {
	i := strings.IndexByte(l.in[lo:hi], ':')
	if i < 0 {
		return l.usdtName(tokProbeName, lo, hi)
	}
	i += lo
	if err := l.usdtName(tokProvider, lo, i); err != nil {
		return err
	}
	l.tok(tokColon, i, i+1)
	return l.usdtName(tokProbeName, i+1, hi)
}

// usdtName lexes a provider or probe name: letters, digits, '_', '-', '.'
// and glob characters.
func (l *lx) usdtName(typ lexer.TokenType, lo, hi int) *Error {
	what := "probe name"
	if typ == tokProvider {
		what = "provider"
	}
	if lo == hi {
		return l.fail(hi, hintUSDT, "missing %s", what)
	}
	for j, r := range l.in[lo:hi] {
		if !isTracepointRune(r) || r == ':' {
			return l.fail(lo+j, "USDT names are letters, digits, '_', '-' and '.', with optional glob *?[]{}", "unexpected %q in a USDT %s", r, what)
		}
	}
	l.tok(typ, lo, hi)
	return nil
}
