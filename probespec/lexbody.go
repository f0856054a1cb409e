package probespec

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hints shared by several errors.
const (
	hintFunc   = "give a function, e.g. malloc or libc:malloc"
	hintOffset = "want decimal or 0x-hex"
	hintColon  = "C++ scopes use \"::\"; a name with a single ':' (like f[abi:cxx11]) needs demangle:NAME"
	hintSpace  = "only demangled names (with :: or parentheses) may contain spaces, and never at their ends"
	hintLine   = "want a decimal line number >= 1, e.g. main.c:42"
)

var matcherKeywords = map[string]MatcherKind{
	"regex": MatchRegex, "re": MatchRegex, "glob": MatchGlob,
	"demangle": MatchDemangled, "exact": MatchExact,
}

func isKeyword(w string) bool { _, ok := matcherKeywords[w]; return ok }

// sepAt reports whether in[i] is a separator colon: a lone ':' or the first
// of a run of three or more. A run of exactly two is the "::" of a name.
func (l *lx) sepAt(i int) bool {
	if i < 0 || i >= len(l.in) || l.in[i] != ':' || (i > 0 && l.in[i-1] == ':') {
		return false
	}
	n := 1
	for i+n < len(l.in) && l.in[i+n] == ':' {
		n++
	}
	return n != 2
}

// nextSep returns the first separator colon in [lo, hi), or -1.
func (l *lx) nextSep(lo, hi int) int {
	for i := lo; i < hi; i++ {
		if l.sepAt(i) {
			return i
		}
	}
	return -1
}

// uprobeBody lexes [target ":"] (matcher ["+" offset] | srcfile ":" line).
func (l *lx) uprobeBody(lo, hi int) *Error {
	if lo == hi {
		return l.fail(hi, hintFunc, "missing function")
	}
	if hasPathPrefix(l.in[lo:hi]) {
		return l.pathTarget(lo, hi)
	}
	if _, n := l.wordAt(lo, isKeyword); n > 0 {
		return l.targetless(lo, hi, false)
	}
	i := l.nextSep(lo, hi)
	if i < 0 || hasSourceExt(l.in[lo:i]) {
		return l.targetless(lo, hi, false)
	}
	if name := l.in[lo:i]; strings.Contains(name, "/") {
		return l.fail(lo, fmt.Sprintf("write %q: paths start with /, ./ or ../", "./"+name), "relative path %q", name)
	}
	if !validName(l.in[lo:i], "._+-") {
		return l.fail(lo, hintColon, "invalid library name %q", l.in[lo:i])
	}
	l.tok(tokLib, lo, i)
	l.tok(tokColon, i, i+1)
	return l.targetless(i+1, hi, false)
}

// pathTarget lexes a body that starts with a path. The path ends at the first
// separator whose remainder is a valid target-less body; with none, the whole
// body must be one (a /RE/ or an absolute source file).
func (l *lx) pathTarget(lo, hi int) *Error {
	var last *Error
	for i, j := l.nextSep(lo, hi), 0; i >= 0; i = j {
		j = l.nextSep(i+1, hi)
		if !l.mayBeBody(i+1, j, hi) {
			continue
		}
		body, err := l.try(func() *Error { return l.targetless(i+1, hi, false) })
		if err != nil {
			last = err
			continue
		}
		if r, n := utf8.DecodeLastRuneInString(l.in[lo:i]); unicode.IsSpace(r) {
			return l.fail(i-n, "remove the whitespace before ':'", "path ends in whitespace")
		}
		l.tok(tokPath, lo, i)
		l.tok(tokColon, i, i+1)
		l.toks = append(l.toks, body...)
		return nil
	}
	body, err := l.try(func() *Error { return l.targetless(lo, hi, false) })
	if err == nil {
		l.toks = append(l.toks, body...)
		return nil
	}
	if last != nil {
		return last
	}
	return err
}

// mayBeBody is a cheap filter for pathTarget: whether [p, hi), whose next
// separator is j (or -1), can be a body without target at all. Only keyword,
// source and /RE/ bodies hold a separator. It keeps long paths linear.
func (l *lx) mayBeBody(p, j, hi int) bool {
	if p == hi || j < 0 || l.in[p] == '/' {
		return true
	}
	if _, n := l.wordAt(p, isKeyword); n > 0 {
		return true
	}
	return hasSourceExt(l.in[p:j])
}

// kprobeBody lexes [module ":"] matcher ["+" offset].
func (l *lx) kprobeBody(lo, hi int) *Error {
	if lo == hi {
		return l.fail(hi, "give a kernel function, e.g. vfs_read", "missing function")
	}
	if _, n := l.wordAt(lo, isKeyword); n > 0 || l.in[lo] == '/' || hasPathPrefix(l.in[lo:hi]) {
		return l.targetless(lo, hi, true)
	}
	i := l.nextSep(lo, hi)
	if i < 0 || hasSourceExt(l.in[lo:i]) {
		return l.targetless(lo, hi, true)
	}
	if !validName(l.in[lo:i], "_-") {
		return l.fail(lo, "module names are letters, digits, '_' and '-', e.g. kprobe:ext4:ext4_file_*", "invalid kernel module name %q", l.in[lo:i])
	}
	l.tok(tokModule, lo, i)
	l.tok(tokColon, i, i+1)
	return l.targetless(i+1, hi, true)
}

// tracepointBody lexes category ":" name, each a glob of tracepoint characters.
func (l *lx) tracepointBody(lo, hi int) *Error {
	const hint = "write CATEGORY:NAME, e.g. sched:sched_switch"
	i := strings.IndexByte(l.in[lo:hi], ':')
	switch {
	case lo == hi:
		return l.fail(hi, hint, "missing tracepoint")
	case i < 0 || lo+i+1 == hi:
		return l.fail(hi, hint, "missing tracepoint name")
	case i == 0:
		return l.fail(lo, hint, "missing tracepoint category")
	}
	i += lo
	for j, r := range l.in[lo:hi] {
		if lo+j != i && !isTracepointRune(r) {
			return l.fail(lo+j, "tracepoint names are letters, digits and '_', with optional glob *?[]{}", "unexpected %q in tracepoint", r)
		}
	}
	l.tok(tokCategory, lo, i)
	l.tok(tokColon, i, i+1)
	l.tok(tokEvent, i+1, hi)
	return nil
}

func isTracepointRune(r rune) bool {
	return r < utf8.RuneSelf && (isAlnum(byte(r)) || strings.ContainsRune("_-.*?[]{},!^\\", r))
}

// targetless lexes a body without target: keyword matcher, srcfile:line,
// /RE/, or a bare matcher. kernel is set for kprobes.
func (l *lx) targetless(lo, hi int, kernel bool) *Error {
	if lo == hi {
		return l.fail(hi, hintFunc, "missing function")
	}
	if w, n := l.wordAt(lo, isKeyword); n > 0 {
		return l.keywordMatcher(w, lo, lo+n, hi)
	}
	if i := l.nextSep(lo, hi); i >= 0 && hasSourceExt(l.in[lo:i]) {
		if kernel {
			return l.fail(lo, "kprobes take kernel function names, e.g. kprobe:vfs_read", "unexpected source location in a kprobe")
		}
		return l.source(lo, i, hi)
	}
	if l.in[lo] == '/' || hasPathPrefix(l.in[lo:hi]) {
		return l.slashOrPath(lo, hi, kernel)
	}
	return l.matcher(lo, hi, MatchNone)
}

// keywordMatcher lexes KEYWORD ":" PATTERN; regex patterns run verbatim to
// the end, the others may end in an offset.
func (l *lx) keywordMatcher(w string, lo, kwEnd, hi int) *Error {
	l.tok(tokKeyword, lo, kwEnd)
	l.tok(tokColon, kwEnd, kwEnd+1)
	p := kwEnd + 1
	if p == hi {
		return l.fail(hi, "give a pattern after the keyword", "empty pattern after %q", l.in[lo:p])
	}
	if matcherKeywords[w] == MatchRegex {
		l.tok(tokPattern, p, hi)
		return nil
	}
	return l.matcher(p, hi, matcherKeywords[w])
}

// source lexes srcfile ":" line; the line's value is checked by the builder.
func (l *lx) source(lo, i, hi int) *Error {
	if j := indexSpace(l.in[lo:i]); j >= 0 {
		return l.fail(lo+j, "source file names cannot contain spaces", "unexpected whitespace in source file")
	}
	line := l.in[i+1 : hi]
	if line == "" {
		return l.fail(hi, hintLine, "missing line number")
	}
	if !allDigits(line) {
		return l.fail(i+1, hintLine, "invalid line %q", line)
	}
	l.tok(tokFile, lo, i)
	l.tok(tokColon, i, i+1)
	l.tok(tokLine, i+1, hi)
	return nil
}

// slashOrPath lexes "/" RE "/" ["+" offset], where the regex ends at the last
// '/'; anything else starting like a path is a path without a function.
func (l *lx) slashOrPath(lo, hi int, kernel bool) *Error {
	s := l.in[lo:hi]
	if j := strings.LastIndexByte(s, '/'); s[0] == '/' && j > 0 && (j == len(s)-1 || s[j+1] == '+') {
		if j == 1 {
			return l.fail(lo, "write /RE/ with a non-empty RE", "empty regex")
		}
		l.tok(tokSlash, lo+1, lo+j)
		if j == len(s)-1 {
			return nil
		}
		return l.offset(lo+j+1, hi)
	}
	if kernel {
		return l.fail(lo, "kprobe targets are kernel modules, e.g. kprobe:ext4:ext4_file_*", "unexpected path in a kprobe")
	}
	return l.fail(hi, "write PATH:FUNCTION, e.g. ./app:main", "missing function after path %q", s)
}

// offset lexes the "+" at plus and the number after it, up to hi.
func (l *lx) offset(plus, hi int) *Error {
	num := l.in[plus+1 : hi]
	if num == "" {
		return l.fail(hi, hintOffset, "missing offset after '+'")
	}
	if !isNumber(num) {
		return l.fail(plus+1, hintOffset, "invalid offset %q", num)
	}
	l.tok(tokPlus, plus, plus+1)
	l.tok(tokNumber, plus+1, hi)
	return nil
}
