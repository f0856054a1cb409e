package probespec

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types of the spec lexer. Zero is never used, so a zero lexer.Token
// in the AST means "absent".
const (
	tokKind      lexer.TokenType = -(iota + 2) // uprobe, ur, kprobe, tp, ...
	tokRet                                     // ret
	tokColon                                   // a separating ':'
	tokPath                                    // /usr/lib/libc.so.6, ./app
	tokLib                                     // libc, c, libstdc++
	tokModule                                  // ext4, vmlinux
	tokKeyword                                 // regex, re, glob, demangle, exact
	tokPattern                                 // a matcher pattern (verbatim)
	tokSlash                                   // the RE of /RE/
	tokPlus                                    // '+' before an offset
	tokNumber                                  // an offset: decimal or 0x-hex
	tokFile                                    // a source file name
	tokLine                                    // a source line
	tokCategory                                // tracepoint category
	tokEvent                                   // tracepoint name
	tokUSDTPath                                // the path of a usdt spec
	tokUSDTLib                                 // the library name of a usdt spec
	tokProvider                                // USDT provider
	tokProbeName                               // USDT probe name
)

var symbols = map[string]lexer.TokenType{
	"EOF": lexer.EOF, "Kind": tokKind, "Ret": tokRet, "Colon": tokColon,
	"Path": tokPath, "Lib": tokLib, "Module": tokModule, "Keyword": tokKeyword,
	"Pattern": tokPattern, "Slash": tokSlash, "Plus": tokPlus, "Number": tokNumber,
	"File": tokFile, "Line": tokLine, "Category": tokCategory, "Event": tokEvent,
	"UsdtPath": tokUSDTPath, "UsdtLib": tokUSDTLib, "Provider": tokProvider, "ProbeName": tokProbeName,
}

// MaxLen is the longest spec accepted, in bytes. Longer input is rejected
// before any other work, so hostile input cannot make parsing slow.
const MaxLen = 4096

// definition is the participle lexer.Definition. Lexing through it assumes
// the uprobe default kind (as -e does); Parse lexes with the caller's kind.
type definition struct{}

func (definition) Symbols() map[string]lexer.TokenType { return symbols }

func (definition) Lex(_ string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxLen+1))
	if err != nil {
		return nil, err
	}
	toks, perr := tokenize(Uprobe, string(b), false)
	if perr != nil {
		return nil, perr
	}
	return &sliceLexer{toks: toks}, nil
}

// sliceLexer hands out tokens computed up front.
type sliceLexer struct{ toks []lexer.Token }

func (s *sliceLexer) Next() (lexer.Token, error) {
	if len(s.toks) == 0 {
		return lexer.Token{Type: lexer.EOF}, nil
	}
	t := s.toks[0]
	s.toks = s.toks[1:]
	return t, nil
}

// lx accumulates tokens over the input in.
type lx struct {
	in   string
	toks []lexer.Token
}

func (l *lx) tok(typ lexer.TokenType, lo, hi int) {
	pos := lexer.Position{Offset: lo, Line: 1, Column: column(l.in, lo)}
	l.toks = append(l.toks, lexer.Token{Type: typ, Value: l.in[lo:hi], Pos: pos})
}

func (l *lx) fail(off int, hint, format string, args ...any) *Error {
	return errAt(l.in, off, hint, format, args...)
}

// try runs f on a scratch token list and returns its tokens, or its error.
func (l *lx) try(f func() *Error) ([]lexer.Token, *Error) {
	saved := l.toks
	l.toks = nil
	err := f()
	got := l.toks
	l.toks = saved
	return got, err
}

// tokenize lexes a whole spec. def is the kind implied by the flag; when
// strict, an explicit kind prefix must agree with it.
func tokenize(def Kind, in string, strict bool) ([]lexer.Token, *Error) {
	l := &lx{in: in}
	if err := checkInput(in); err != nil {
		return nil, err
	}
	kind, ret, lo := def, false, 0
	if w, n := l.wordAt(0, isKindWord); n > 0 {
		k := kindWords[w]
		if strict && k.kind != def {
			hint := "drop the \"" + in[:n+1] + "\" prefix or pass the spec with --" + k.kind.String()
			return nil, l.fail(0, hint, "kind %q contradicts --%s", in[:n], def)
		}
		kind, ret, lo = k.kind, k.ret, n+1
		l.tok(tokKind, 0, n)
		l.tok(tokColon, n, n+1)
	}
	if err := l.event(kind, ret, lo); err != nil {
		return nil, err
	}
	return l.toks, nil
}

// event lexes what follows the optional kind prefix at lo.
func (l *lx) event(kind Kind, ret bool, lo int) *Error {
	if _, n := l.wordAt(lo, isRetWord); n > 0 {
		switch {
		case kind == Tracepoint:
			return l.fail(lo, "ret: applies to uprobes and kprobes only", "unexpected ret: in a tracepoint")
		case kind == USDT:
			return l.fail(lo, "ret: applies to uprobes and kprobes only", "unexpected ret: in a USDT probe")
		case ret:
			hint := "write either " + kind.String()[:1] + "retprobe:NAME or " + kind.String() + ":ret:NAME"
			return l.fail(lo, hint, "ret: repeats the return probe already asked by %q", l.in[:lo-1])
		}
		l.tok(tokRet, lo, lo+n)
		l.tok(tokColon, lo+n, lo+n+1)
		lo += n + 1
		if _, n := l.wordAt(lo, isRetWord); n > 0 {
			return l.fail(lo, "write ret: once", "ret: given twice")
		}
	}
	switch kind {
	case Tracepoint:
		return l.tracepointBody(lo, len(l.in))
	case Kprobe:
		return l.kprobeBody(lo, len(l.in))
	case Uprobe:
		return l.uprobeBody(lo, len(l.in))
	case USDT:
		return l.usdtBody(lo, len(l.in))
	}
	return l.fail(0, "use Uprobe, Kprobe, Tracepoint or USDT", "invalid default kind %d", int(kind))
}

// checkInput rejects inputs no spec can be: empty, too long, invalid UTF-8,
// control characters, surrounding whitespace.
func checkInput(in string) *Error {
	if len(in) > MaxLen {
		return &Error{Pos: 1, Input: in, Msg: "spec too long", Hint: "specs are at most 4096 bytes"}
	}
	if in == "" {
		return errAt(in, 0, "give a function, e.g. malloc or libc:malloc", "empty spec")
	}
	for i, r := range in {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(in[i:]); n <= 1 {
				return errAt(in, i, "specs are UTF-8 text", "invalid UTF-8")
			}
		}
		if unicode.IsControl(r) {
			return errAt(in, i, "remove it; specs are one line of printable text", "control character %q", r)
		}
	}
	if r, _ := utf8.DecodeRuneInString(in); unicode.IsSpace(r) {
		return errAt(in, 0, "remove the whitespace around the spec", "leading whitespace")
	}
	if r, n := utf8.DecodeLastRuneInString(in); unicode.IsSpace(r) {
		return errAt(in, len(in)-n, "remove the whitespace around the spec", "trailing whitespace")
	}
	return nil
}

type kindWord struct {
	kind Kind
	ret  bool
}

var kindWords = map[string]kindWord{
	"uprobe": {Uprobe, false}, "u": {Uprobe, false},
	"uretprobe": {Uprobe, true}, "ur": {Uprobe, true},
	"kprobe": {Kprobe, false}, "k": {Kprobe, false},
	"kretprobe": {Kprobe, true}, "kr": {Kprobe, true},
	"tracepoint": {Tracepoint, false}, "tp": {Tracepoint, false}, "t": {Tracepoint, false},
	"usdt": {USDT, false},
}

func isKindWord(w string) bool { _, ok := kindWords[w]; return ok }

func isRetWord(w string) bool { return w == "ret" }

// wordAt reports whether a word accepted by isWord (given in lower case)
// starts at lo and is followed by a separator colon. It returns the
// lower-cased word and its length in bytes, or 0.
func (l *lx) wordAt(lo int, isWord func(string) bool) (string, int) {
	i := strings.IndexByte(l.in[lo:], ':')
	if i <= 0 || i > len("tracepoint") || !l.sepAt(lo+i) {
		return "", 0
	}
	w := strings.ToLower(l.in[lo : lo+i])
	if !isWord(w) {
		return "", 0
	}
	return w, i
}
