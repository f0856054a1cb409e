package probespec

// Kind is the kind of event a spec asks for. Return probes are not a kind of
// their own: they are Uprobe or Kprobe with Spec.Ret set.
type Kind int

// Event kinds.
const (
	KindInvalid Kind = iota
	Uprobe
	Kprobe
	Tracepoint
	USDT
)

func (k Kind) String() string {
	switch k {
	case Uprobe:
		return "uprobe"
	case Kprobe:
		return "kprobe"
	case Tracepoint:
		return "tracepoint"
	case USDT:
		return "usdt"
	}
	return "invalid"
}

// TargetKind says where a user or kernel function is looked up.
type TargetKind int

// Target kinds.
const (
	// TargetNone: no target given. For uprobes the resolver searches the
	// traced process (-p / -- CMD) or every library in the ld.so.cache; for
	// kprobes, the whole kernel.
	TargetNone TargetKind = iota
	// TargetPath: a file path starting with "/", "./" or "../".
	TargetPath
	// TargetLib: a library name such as "libc", "c", "libc.so.6", "pthread".
	TargetLib
	// TargetModule: a kernel module name for kprobes ("ext4"; "vmlinux" is
	// the core kernel).
	TargetModule
)

func (k TargetKind) String() string {
	switch k {
	case TargetPath:
		return "path"
	case TargetLib:
		return "lib"
	case TargetModule:
		return "module"
	}
	return "none"
}

// Target names the object (file, library or kernel module) a function lives in.
type Target struct {
	Kind TargetKind
	Name string
}

// MatcherKind says how a matcher's pattern is compared with symbol names.
type MatcherKind int

// Matcher kinds (docs/spec-language.md#matchers).
const (
	MatchNone MatcherKind = iota
	// MatchExact compares the raw (mangled) symbol name for equality.
	MatchExact
	// MatchGlob is a gobwas glob anchored at both ends, on the raw name.
	MatchGlob
	// MatchRegex is an unanchored Go RE2 regexp, tried on the raw name and
	// then on the demangled name.
	MatchRegex
	// MatchDemangled is a glob over demangled names (C++, Rust), with the
	// "::"-aligned suffix rule of
	// docs/spec-language.md#what-a-matcher-matches.
	MatchDemangled
)

func (k MatcherKind) String() string {
	switch k {
	case MatchExact:
		return "exact"
	case MatchGlob:
		return "glob"
	case MatchRegex:
		return "regex"
	case MatchDemangled:
		return "demangle"
	}
	return "none"
}

// Matcher selects functions by name.
type Matcher struct {
	Kind    MatcherKind
	Pattern string
}

// Source is a source location "file:line"; Line is >= 1 when set.
type Source struct {
	File string
	Line int
}

// IsZero reports whether no source location is set.
func (s Source) IsZero() bool { return s.File == "" && s.Line == 0 }

// TracepointName is a tracepoint "category:name"; each part may be a glob.
type TracepointName struct {
	Category string
	Name     string
}

// USDTName is a USDT probe "provider:name"; each part may be a glob, and
// an empty Provider matches every provider.
type USDTName struct {
	Provider string
	Name     string
}

// Spec is one parsed probe spec. It is a plain comparable value: two specs
// are the same probe request exactly when they are ==.
//
// Exactly one of Matcher (Kind != MatchNone), Source (Line >= 1),
// Tracepoint (Category != "") or USDT (Name != "") is set, according to
// Kind.
type Spec struct {
	Kind       Kind
	Ret        bool
	Target     Target
	Matcher    Matcher
	Offset     uint64
	Source     Source
	Tracepoint TracepointName
	USDT       USDTName
}

// IsSource reports whether the spec names a source line rather than a function.
func (s Spec) IsSource() bool { return !s.Source.IsZero() }
