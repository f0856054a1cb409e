package probespec

// Constructors that keep the test tables short.

type opt func(*Spec)

func spec(kind Kind, mk MatcherKind, pattern string, opts ...opt) Spec {
	s := Spec{Kind: kind, Matcher: Matcher{Kind: mk, Pattern: pattern}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func up(mk MatcherKind, pattern string, opts ...opt) Spec { return spec(Uprobe, mk, pattern, opts...) }
func kp(mk MatcherKind, pattern string, opts ...opt) Spec { return spec(Kprobe, mk, pattern, opts...) }

func src(file string, line int, opts ...opt) Spec {
	s := Spec{Kind: Uprobe, Source: Source{File: file, Line: line}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func tp(category, name string) Spec {
	return Spec{Kind: Tracepoint, Tracepoint: TracepointName{Category: category, Name: name}}
}

func usdt(provider, name string, opts ...opt) Spec {
	s := Spec{Kind: USDT, USDT: USDTName{Provider: provider, Name: name}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func lib(n string) opt    { return func(s *Spec) { s.Target = Target{Kind: TargetLib, Name: n} } }
func path(n string) opt   { return func(s *Spec) { s.Target = Target{Kind: TargetPath, Name: n} } }
func module(n string) opt { return func(s *Spec) { s.Target = Target{Kind: TargetModule, Name: n} } }
func off(n uint64) opt    { return func(s *Spec) { s.Offset = n } }
func ret(s *Spec)         { s.Ret = true }
