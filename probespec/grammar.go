package probespec

import (
	"errors"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar over the tokens of lexer.go. A zero lexer.Token
// field means the optional part is absent.

type specAST struct {
	Kind  lexer.Token `parser:"( @Kind Colon )?"`
	Ret   lexer.Token `parser:"( @Ret Colon )?"`
	TP    *tpAST      `parser:"( @@"`
	USDT  *usdtAST    `parser:"| @@"`
	Probe *probeAST   `parser:"| @@ )"`
}

type usdtAST struct {
	Target   lexer.Token `parser:"( @( UsdtPath | UsdtLib ) Colon )?"`
	Provider lexer.Token `parser:"( @Provider Colon )?"`
	Name     lexer.Token `parser:"@ProbeName"`
}

type tpAST struct {
	Category lexer.Token `parser:"@Category Colon"`
	Name     lexer.Token `parser:"@Event"`
}

type probeAST struct {
	Target *targetAST `parser:"( @@ Colon )?"`
	Source *sourceAST `parser:"( @@"`
	Match  *matchAST  `parser:"| @@ )"`
}

type targetAST struct {
	Name lexer.Token `parser:"@( Path | Lib | Module )"`
}

type sourceAST struct {
	File lexer.Token `parser:"@File Colon"`
	Line lexer.Token `parser:"@Line"`
}

type matchAST struct {
	Keyword lexer.Token `parser:"( @Keyword Colon )?"`
	Pattern lexer.Token `parser:"( @Pattern"`
	Slash   lexer.Token `parser:"| @Slash )"`
	Offset  lexer.Token `parser:"( Plus @Number )?"`
}

var grammar = buildGrammar()

// buildGrammar builds the parser. It names symbols so that package
// initialisation fills the token table first.
func buildGrammar() *participle.Parser[specAST] {
	if len(symbols) == 0 {
		panic("probespec: token table not initialised")
	}
	return participle.MustBuild[specAST](participle.Lexer(definition{}))
}

// parseRaw parses without the canonical-form check of Parse.
func parseRaw(def Kind, in string, strict bool) (s Spec, perr *Error) {
	defer func() {
		if r := recover(); r != nil {
			s, perr = Spec{}, errAt(in, 0, "please report this spec as a bug", "internal error: %v", r)
		}
	}()
	toks, perr := tokenize(def, in, strict)
	if perr != nil {
		return Spec{}, perr
	}
	pl, err := lexer.Upgrade(&sliceLexer{toks: toks})
	if err != nil {
		return Spec{}, errAt(in, 0, "", "%v", err)
	}
	a, err := grammar.ParseFromLexer(pl)
	if err != nil {
		return Spec{}, participleError(in, err)
	}
	return build(in, def, a)
}

// participleError converts a grammar error. The lexer only emits sequences
// the grammar accepts, so this is a last resort.
func participleError(in string, err error) *Error {
	var pe participle.Error
	if errors.As(err, &pe) {
		return errAt(in, pe.Position().Offset, "", "syntax error: %s", pe.Message())
	}
	return errAt(in, 0, "", "syntax error: %v", err)
}

// build turns the AST into a Spec, checking values: numbers, regexes, globs.
func build(in string, def Kind, a *specAST) (Spec, *Error) {
	s := Spec{Kind: def}
	if a.Kind.Type != 0 {
		k := kindWords[strings.ToLower(a.Kind.Value)]
		s.Kind, s.Ret = k.kind, k.ret
	}
	s.Ret = s.Ret || a.Ret.Type != 0
	switch {
	case a.TP != nil:
		return buildTracepoint(in, s, a.TP)
	case a.USDT != nil:
		return buildUSDT(in, s, a.USDT)
	case a.Probe == nil:
		return Spec{}, errAt(in, 0, "", "internal error: empty parse")
	}
	p := a.Probe
	if p.Target != nil {
		s.Target = Target{Kind: targetKinds[p.Target.Name.Type], Name: p.Target.Name.Value}
	}
	if p.Source != nil {
		return buildSource(in, s, a, p.Source)
	}
	m, perr := buildMatcher(in, p.Match)
	if perr != nil {
		return Spec{}, perr
	}
	s.Matcher = m
	if t := p.Match.Offset; t.Type != 0 {
		if s.Offset, perr = parseOffset(in, t); perr != nil {
			return Spec{}, perr
		}
	}
	return s, nil
}

var targetKinds = map[lexer.TokenType]TargetKind{tokPath: TargetPath, tokLib: TargetLib, tokModule: TargetModule,
	tokUSDTPath: TargetPath, tokUSDTLib: TargetLib}

func buildTracepoint(in string, s Spec, tp *tpAST) (Spec, *Error) {
	for _, t := range []lexer.Token{tp.Category, tp.Name} {
		if _, err := (Matcher{Kind: MatchGlob, Pattern: t.Value}).Compile(); err != nil {
			return Spec{}, compileError(in, t, hintGlob, err)
		}
	}
	s.Tracepoint = TracepointName{Category: tp.Category.Value, Name: tp.Name.Value}
	return s, nil
}

// buildUSDT checks that the provider and name are valid globs.
func buildUSDT(in string, s Spec, u *usdtAST) (Spec, *Error) {
	for _, t := range []lexer.Token{u.Provider, u.Name} {
		if t.Type == 0 {
			continue
		}
		if _, err := (Matcher{Kind: MatchGlob, Pattern: t.Value}).Compile(); err != nil {
			return Spec{}, compileError(in, t, hintUSDTGlob, err)
		}
	}
	if u.Target.Type != 0 {
		s.Target = Target{Kind: targetKinds[u.Target.Type], Name: u.Target.Value}
	}
	s.USDT = USDTName{Provider: u.Provider.Value, Name: u.Name.Value}
	return s, nil
}

// buildSource checks the line; a return probe on a source line is rejected
// here, as uretprobes attach to function entries only.
func buildSource(in string, s Spec, a *specAST, src *sourceAST) (Spec, *Error) {
	if s.Ret {
		pos := a.Kind.Pos.Offset
		if a.Ret.Type != 0 {
			pos = a.Ret.Pos.Offset
		}
		return Spec{}, errAt(in, pos, "drop ret:, or name the function instead", "return probes attach to functions, not source lines")
	}
	t := src.Line
	n, err := strconv.ParseUint(t.Value, 10, 31)
	switch {
	case err != nil:
		return Spec{}, errAt(in, t.Pos.Offset, hintLine, "line %q out of range", t.Value)
	case n == 0:
		return Spec{}, errAt(in, t.Pos.Offset, hintLine, "invalid line %q", t.Value)
	}
	s.Source = Source{File: src.File.Value, Line: int(n)}
	return s, nil
}

const (
	hintRegex    = "regexes use Go RE2 syntax"
	hintGlob     = "globs use * ? [abc] [!abc] {a,b} and \\ to quote; for a literal name use exact:NAME"
	hintDemangle = "demangled patterns are globs: * ? [abc] {a,b}, \\ to quote"
	hintUSDTGlob = "USDT names are globs: * ? [abc] [!abc] {a,b}, \\ to quote"
)

func buildMatcher(in string, m *matchAST) (Matcher, *Error) {
	t := m.Pattern
	var mt Matcher
	switch {
	case m.Slash.Type != 0:
		t = m.Slash
		mt = Matcher{Kind: MatchRegex, Pattern: t.Value}
	case m.Keyword.Type != 0:
		mt = Matcher{Kind: matcherKeywords[strings.ToLower(m.Keyword.Value)], Pattern: t.Value}
	default:
		mt = Matcher{Kind: classify(t.Value), Pattern: t.Value}
	}
	if _, err := mt.Compile(); err != nil {
		hint := map[MatcherKind]string{MatchRegex: hintRegex, MatchGlob: hintGlob, MatchDemangled: hintDemangle}[mt.Kind]
		return Matcher{}, compileError(in, t, hint, err)
	}
	return mt, nil
}

// compileError places a Compile error at the offending byte of pattern token
// t when known, else at its start.
func compileError(in string, t lexer.Token, hint string, err error) *Error {
	off := t.Pos.Offset
	var pe *patternError
	if errors.As(err, &pe) && pe.off >= 0 && pe.off <= len(t.Value) {
		off += pe.off
	}
	return errAt(in, off, hint, "%v", err)
}

func parseOffset(in string, t lexer.Token) (uint64, *Error) {
	v := t.Value
	var n uint64
	var err error
	if len(v) > 2 && (v[:2] == "0x" || v[:2] == "0X") {
		n, err = strconv.ParseUint(v[2:], 16, 64)
	} else {
		n, err = strconv.ParseUint(v, 10, 64)
	}
	if err != nil {
		return 0, errAt(in, t.Pos.Offset, "offsets fit in 64 bits", "offset %q out of range", v)
	}
	return n, nil
}
