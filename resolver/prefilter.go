package resolver

import (
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/probee/probee/probespec"
)

// A prefilter rejects, on the raw (mangled) name alone, symbols whose
// demangled names cannot match a demangled or regex pattern, so that only
// the few candidates are demangled (demangling libLLVM's 35000 names takes
// longer than bpftrace -l lists them).
//
// It holds tokens: runs of letters and '_' that every text the pattern
// matches contains, taken from the pattern's literal parts (outside glob
// classes and alternatives; for a regex, the literals every match must
// contain). An Itanium (C++) or legacy Rust demangler copies identifiers
// from the mangled name: "llvm::SmallVectorBase<*>::grow_pod*" can only
// match names containing "llvm", "SmallVectorBase" and "grow_pod". The
// other words of demangled names come from the demangler itself ("std",
// "unsigned", "operator", "lambda", "non-virtual thunk to", literal
// suffixes "ul"); a token that is part of such a word (generatedWords)
// proves nothing and is dropped. Digits split tokens (lambda and template
// numbers are re-encoded). Rust v0 (_R) names always pass: their printer
// spells lifetimes and constants with letters of its own.
// TestPrefilterSound checks the premise on real libraries.
type prefilter []string

// newPrefilter returns the prefilter of a demangled or regex matcher;
// others get none (they match raw names only).
func newPrefilter(m probespec.Matcher) prefilter {
	var tokens []string
	switch m.Kind {
	case probespec.MatchDemangled:
		tokens = globTokens(m.Pattern)
	case probespec.MatchRegex:
		tokens = regexTokens(m.Pattern)
	}
	var p prefilter
	for _, t := range tokens {
		if !strings.Contains(generatedText, t) && !slices.Contains(p, t) {
			p = append(p, t)
		}
	}
	// Longest first: the rarest, so most names fail on the first test.
	slices.SortStableFunc(p, func(a, b string) int { return len(b) - len(a) })
	return p
}

// admits reports whether a symbol named raw may match once demangled.
func (p prefilter) admits(raw string) bool {
	if strings.HasPrefix(raw, "_R") {
		return true
	}
	for _, t := range p {
		if !strings.Contains(raw, t) {
			return false
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// letterRuns appends the runs of letters and '_' of s to out.
func letterRuns(s string, out []string) []string {
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isTokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

// globTokens returns the letter runs of a demangled glob's literal text:
// outside [...] and {...} groups, and split at backslash escapes.
func globTokens(p string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if depth == 0 && start < end {
			out = letterRuns(p[start:end], out)
		}
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '[', '{':
			flush(i)
			depth++
			start = i + 1
		case ']', '}':
			flush(i)
			depth = max(depth-1, 0)
			start = i + 1
		case '\\':
			flush(i)
			i++
			start = i + 1
		}
	}
	flush(len(p))
	return out
}

// regexTokens returns the letter runs of the literals every match of the
// regex p contains; none when p does not parse or folds case.
func regexTokens(p string) []string {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []string
	for _, lit := range requiredLiterals(re.Simplify(), nil) {
		out = letterRuns(lit, out)
	}
	return out
}

// requiredLiterals appends the case-sensitive literals that every match
// of re contains.
func requiredLiterals(re *syntax.Regexp, out []string) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			out = append(out, string(re.Rune))
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = requiredLiterals(sub, out)
		}
	case syntax.OpCapture, syntax.OpPlus:
		out = requiredLiterals(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			out = requiredLiterals(re.Sub[0], out)
		}
	}
	return out
}

// generatedWords are the words github.com/ianlancetaylor/demangle prints
// on its own for C++ and legacy Rust names: builtin types, keywords, cast
// and operator names, the std:: abbreviations, special names ("vtable
// for", "non-virtual thunk to"), lambda/unnamed/clone markers, literal
// suffixes and hex prefixes. A token inside one of them proves nothing.
var generatedWords = []string{
	// builtin and vendor types, qualifiers
	"void", "wchar_t", "bool", "char", "signed", "unsigned", "short", "int",
	"long", "__int128", "float", "double", "__float128", "_Float", "half",
	"decimal32", "decimal64", "decimal128", "char8_t", "char16_t",
	"char32_t", "nullptr_t", "bfloat16_t", "_BitInt", "_Accum", "_Fract",
	"_Sat", "_Complex", "_Imaginary", "__vector", "__pixel", "vector",
	"pixel", "const", "volatile", "restrict", "__restrict",
	"transaction_safe", "noexcept", "throw", "objc_object", "objcproto",
	"id", "SEL", "__ptrauth", "__ptr32", "__ptr64",
	// expressions and keywords
	"decltype", "auto", "nullptr", "true", "false", "this", "sizeof",
	"alignof", "__alignof__", "__uuidof", "typeid", "requires",
	"dynamic_cast", "static_cast", "const_cast", "reinterpret_cast",
	"operator", "new", "delete", "co_await", "co_yield", "co_return",
	"typename", "template", "template_template", "class", "struct",
	"union", "enum", "friend", "enable_if", "module", "parm", "auto",
	"string", "literal", "dyn", "as", "for", "mut", "unsafe", "extern",
	"fn", "impl", "str", "i128", "u128", "isize", "usize",
	// std:: abbreviations
	"std", "allocator", "basic_string", "char_traits", "basic_istream",
	"basic_ostream", "basic_iostream", "istream", "ostream", "iostream",
	// special names and markers
	"abi", "clone", "lambda", "unnamed", "type", "anonymous", "namespace",
	"default", "arg", "closure", "shim", "vtable", "VTT", "construction",
	"typeinfo", "name", "guard", "variable", "reference", "temporary",
	"hidden", "alias", "transaction", "non", "virtual", "thunk", "to",
	"covariant", "return", "TLS", "init", "initialization", "function",
	"wrapper", "java", "Class", "parameter", "object", "initializer",
	"invocation", "block", "in", "global", "constructors", "destructors",
	"keyed", "resource", "alloc_token", "_GLOBAL_", "_block_invoke",
	// literal suffixes and prefixes
	"ull", "ll", "ul", "0x", "p", "f", "x",
}

// generatedText holds generatedWords, space-separated, for substring tests.
var generatedText = strings.Join(generatedWords, " ")
