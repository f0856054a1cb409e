package probespec

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics, returns an error xor a value,
// that errors are well-formed *Error, and that every accepted spec's
// canonical form parses back to it and is stable.
func FuzzParse(f *testing.F) {
	for _, c := range conformanceCases {
		f.Add(uint8(Uprobe), c.in)
	}
	for _, c := range parseCases {
		f.Add(uint8(Uprobe), c.in)
	}
	for _, c := range errCases {
		mode := uint8(c.kind)
		if c.strict {
			mode |= 8
		}
		f.Add(mode, c.in)
	}
	f.Fuzz(func(t *testing.T, mode uint8, in string) {
		kind := Kind(mode % 8 % 5)
		parse := Parse
		if mode&8 != 0 {
			parse = ParseFlag
		}
		s, err := parse(kind, in)
		if err != nil {
			checkFuzzError(t, in, s, err)
			return
		}
		checkInvariants(t, in, s)
		c := s.String()
		back, err := Parse(Uprobe, c)
		if err != nil || back != s {
			t.Fatalf("%q parses to %#v; its String %q parses to %#v, %v", in, s, c, back, err)
		}
		if c2 := back.String(); c2 != c {
			t.Fatalf("%q: String not stable: %q then %q", in, c, c2)
		}
	})
}

func checkFuzzError(t *testing.T, in string, s Spec, err error) {
	t.Helper()
	if s != (Spec{}) {
		t.Fatalf("%q: value %#v returned with error %v", in, s, err)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%q: error %T is not *Error: %v", in, err, err)
	}
	if pe.Pos < 1 || pe.Pos > utf8.RuneCountInString(in)+1 || pe.Input != in || pe.Msg == "" {
		t.Fatalf("%q: malformed error %#v", in, pe)
	}
	if strings.Contains(pe.Msg, "internal error") || strings.Contains(pe.Msg, "ambiguous") {
		t.Fatalf("%q: %v", in, err)
	}
	if lines := strings.Split(pe.Caret(), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[1], "^") {
		t.Fatalf("%q: bad caret %q", in, pe.Caret())
	}
}

// checkInvariants checks the shape documented on Spec.
func checkInvariants(t *testing.T, in string, s Spec) {
	t.Helper()
	hasM, hasS, hasT, hasU := s.Matcher.Kind != MatchNone, s.IsSource(), s.Tracepoint != (TracepointName{}), s.USDT != (USDTName{})
	ok := false
	switch s.Kind {
	case Tracepoint:
		ok = hasT && !hasU && !hasM && !hasS && !s.Ret && s.Target == (Target{}) && s.Offset == 0
	case Uprobe:
		ok = !hasT && !hasU && hasM != hasS && s.Target.Kind != TargetModule && (!hasS || !s.Ret && s.Source.Line >= 1)
	case Kprobe:
		ok = !hasT && !hasU && hasM && !hasS && (s.Target.Kind == TargetNone || s.Target.Kind == TargetModule)
	case USDT:
		ok = hasU && s.USDT.Name != "" && !hasT && !hasM && !hasS && !s.Ret && s.Offset == 0 && s.Target.Kind != TargetModule
	}
	if !ok {
		t.Fatalf("%q: spec breaks invariants: %#v", in, s)
	}
	if hasM {
		cm, err := s.Matcher.Compile()
		if err != nil {
			t.Fatalf("%q: accepted matcher does not compile: %v", in, err)
		}
		cm.Match(in)
		cm.Match(s.Matcher.Pattern)
	}
}
