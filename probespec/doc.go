// Package probespec parses the probe spec language (the user reference is
// docs/spec-language.md): the strings given to --uprobe, --kprobe,
// --tracepoint, -e and --list-probes.
//
// It owns the AST (Spec and its parts), Parse/ParseFlag, the canonical
// Spec.String, and Matcher.Compile, which the resolver uses to test symbol
// names. Parsing is pure: no file system, no kernel.
//
// # API
//
//	Parse(defaultKind, text)  -e/--list-probes (Uprobe): an explicit kind wins
//	ParseFlag(flagKind, text) --uprobe/--kprobe/--tracepoint/--usdt: a contradicting kind is an error
//	Spec.String()             canonical text; Parse(Uprobe, s.String()) == s
//	Matcher.Compile()         Compiled.Match(name) for exact, glob, regex, demangled
//
// Errors are *Error: a 1-based column, the input, a message and a hint.
// Error() reads "1:8: invalid offset \"0xZZ\": want decimal or 0x-hex" and
// Caret() gives the input with a caret under the column.
//
// # Design: a context-sensitive lexer under a participle grammar
//
// The language cannot be split by a regular lexer: a regex body runs to the
// end of the string and may hold ':' and '+', paths may hold ':', demangled
// names hold "::", and "operator+" holds a '+' that is not an offset. So the
// lexer (lexer.go, lexbody.go, names.go, written here because no stock
// participle lexer can look at the whole string) takes those decisions with
// the kind in hand and emits tokens that say what each part is: Kind, Ret,
// Path, Lib, Module, Keyword, Pattern, Slash (the RE of /RE/), Plus, Number,
// File, Line, Category, Event, UsdtPath, UsdtLib, Provider, ProbeName, and
// the separating Colons. The participle grammar (grammar.go) then gives the
// shape:
//
//	Event   = (Kind ":")? (Ret ":")? (Category ":" Event | USDT | Probe)
//	USDT    = ((UsdtPath | UsdtLib) ":")? (Provider ":")? ProbeName
//	Probe   = ((Path | Lib | Module) ":")? (File ":" Line | Matcher)
//	Matcher = (Keyword ":")? (Pattern | Slash) ("+" Number)?
//
// and a builder turns the tree into a Spec, checking values: offsets (uint64),
// lines (1..2^31-1), regexes (Go RE2) and globs (gobwas). Keeping the grammar
// in participle keeps the shape of the language declarative and in one place;
// the lexer holds only the context-sensitive splitting.
//
// # Lexing rules
//
// Input: at most MaxLen (4096) bytes, counted on the canonical form too (so
// a spec near the limit cannot grow past it by gaining "uprobe:"), of valid
// UTF-8 without control
// characters (NUL, tab, newline...). Leading or trailing whitespace is an
// error, not trimmed: a regex body runs verbatim to the end, so trimming would
// silently change it. Inner whitespace is legal only inside demangled
// patterns (f(int, char)), regexes and paths.
//
// Separators: a lone ':' separates, "::" belongs to a name, and in a run of
// three or more colons the first separates ("libc:::f" is lib libc, name ::f).
//
// Keywords: the kind words (uprobe u uretprobe ur kprobe k kretprobe kr
// tracepoint tp t usdt; first position only; usdt has no short form, as
// kind words are case-insensitive and "u" is uprobe), "ret" and the matcher keywords
// (regex re glob demangle exact) are case-insensitive and count only when
// followed by a separator: "regex::Regex::new" is a demangled name. The
// canonical form spells them in lower case. ret: twice ("ret:ret:f"), ret:
// after uretprobe:/kretprobe: ("ur:ret:malloc"), ret: on a tracepoint and a
// return probe on a source line are errors (return probes attach to
// functions, so the last is rejected at parse time, not by the resolver).
//
// Uprobe body, in order:
//   - starts with "/", "./" or "../": a path. It ends at the first separator
//     whose remainder is a valid body without target, so "/opt/a:b/app:malloc"
//     has path "/opt/a:b/app". With no such separator the whole body must be
//     a /RE/ or an absolute source file; else the error of the last split is
//     reported ("/x.so:malloc+0xZZ" reports the offset). A path may hold
//     inner spaces but cannot end in one.
//   - starts with a matcher keyword, or is srcfile:line: no target.
//   - otherwise the text before the first separator is a library name
//     (letters, digits and . _ + -; "libstdc++" is fine), and the rest the body.
//
// A body without target is, in order: KEYWORD:PATTERN; srcfile:line (srcfile
// ends in .c .cc .cpp .cxx .h .hpp .rs .go .s .S .zig, has no ':'; a lib name
// with such an extension is read as a source file); /RE/[+off], the RE ending
// at the last '/', which may be followed by "+off" only; or a bare pattern,
// classified as docs/spec-language.md#matchers says ("::" or "(":
// demangled; * ? [ {: glob; else exact). A bare pattern has no separator (write demangle:f[abi:cxx11]()
// for a single ':'), does not end in '/', and is not all digits.
//
// Regex patterns (regex:, re:) take the rest verbatim, with no offset: write
// /RE/+0x10 for an offset. For the other matchers the offset is a trailing
// "+NUMBER" (decimal, or 0x/0X hex); every other '+' must directly follow the
// word "operator" or "operator+" (operator+, operator++, operator+=), else it
// is an offset error when it is the last '+' ("malloc+", "malloc+0xZZ") or an
// unexpected '+'. So "ns::It::operator++0x10" is operator+ at offset 0x10.
// Offset 0 is the same as no offset.
//
// Kprobe body: [module:] matcher [+off]; module names are letters, digits,
// '_' and '-' ("vmlinux" is the core kernel). Paths and source lines are
// errors. Tracepoint body: category:name, both non-empty, of letters, digits,
// '_', '-', '.' and glob characters *?[]{},!^\, each a valid gobwas glob.
//
// USDT body (lexusdt.go): [target:][provider:]name. USDT names hold no
// ':', so every ':' separates: one part is the name, two are
// provider:name, three are target:provider:name with a library name
// (libjvm) or a path as target. A body starting with "/", "./" or "../"
// is a path followed by one or two parts; the path ends at the first ':'
// whose remainder is a valid [provider:]name (at most one ':', so only the
// last two are tried), and may hold ':' itself. Provider and name are
// letters, digits, '_', '-', '.' and the glob characters of tracepoints,
// each a valid gobwas glob; a missing provider (Spec.USDT.Provider "")
// matches every provider. ret: and offsets are errors: a USDT probe is a
// place, not a function.
//
// # Canonical form
//
// String writes the full kind word, the target, then the first spelling that
// parses back to the same Spec: the bare pattern, else KEYWORD:PATTERN (for
// regexes regex:RE, else /RE/, and always /RE/+0xN with an offset). Parse
// checks that its result has such a spelling and rejects the rare spec that
// has none as ambiguous, so Parse(Uprobe, s.String()) == s holds for every
// accepted s (FuzzParse checks it).
//
// # Demangled patterns
//
// Compile turns a demangled pattern into an anchored gobwas glob in which the
// C++/Rust name parts that look like glob syntax are literal: operator[],
// operator*, operator*=, operator->*, operator new[], operator delete[], ABI
// tags [abi:TAG], and brace groups containing '#' ({lambda(int)#1},
// {closure#0}). A pattern with no wildcard left also matches as a
// "::"-aligned suffix (Klass::method matches ns::Klass::method).
//
// Error columns count runes; Caret assumes one terminal column per rune.
package probespec
