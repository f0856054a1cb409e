package main

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/probee/probee/objfile"
)

// Frame is one physical user-space frame.
type Frame struct {
	Name   string // function name, normalised; "" when the tool could not name it
	Module string // base name of the object holding the frame, when known
	Offset uint64 // address within Module, for frames with a Module
}

// Stack is one distinct stack of one thread and how many samples had it.
type Stack struct {
	Comm   string
	Frames []Frame // root first
	Count  uint64
}

// Profile is every stack one tool collected from one command.
type Profile []Stack

// launchers are the comms of the tools' own children before they exec the
// command; their samples are not the workload's.
var launchers = map[string]bool{"probee": true, "perf-exec": true}

// exitTeardown marks probee's samples taken in a task's exit (do_exit):
// perf samples none there (xz: none in perf's run, 13 in probee's, all
// unmapping the address space, where the user stack's pages are gone), so
// they are dropped from both the comparison and the shares.
const exitTeardown = "do_exit_[k]"

var (
	moduleOffRE = regexp.MustCompile(`^(\S+)\+0x([0-9a-f]+)$`)
	addressRE   = regexp.MustCompile(`^0x[0-9a-f]+$`)
	versionRE   = regexp.MustCompile(`@@?[A-Za-z_][A-Za-z0-9_.]*$`)
	symOffRE    = regexp.MustCompile(`\+0x[0-9a-f]+$`)
)

// normName strips what one tool adds to a symbol name and the other does
// not: a symbol version and an offset into the symbol; and it gives names
// the two tools spell differently for one address one spelling (aliases,
// demangler styles): see aliasName and unbracket.
func normName(s string) string {
	s = symOffRE.ReplaceAllString(s, "")
	s = objfile.Demangle(versionRE.ReplaceAllString(s, ""))
	return unbracket(aliasName(spelling(stripParams(s))))
}

// spelling writes the same name one way where the tools' demanglers or
// formats differ: "; " in names (Rust's [u8; 24]) is ", " in collapsed
// stacks, which separate frames with ';'; perf closes nested C++
// templates with ">>", probee's demangler with "> >".
func spelling(s string) string {
	s = strings.ReplaceAll(s, ";", ",")
	for strings.Contains(s, "> >") {
		s = strings.ReplaceAll(s, "> >", ">>")
	}
	return s
}

// aliases are symbols of one address that perf (reading the debug
// symbols) and probee (the dynamic symbols) name differently: libc
// exports its allocator under both names (readelf -Ws libc.so.6).
var aliases = map[string]string{
	"cfree": "free", "__libc_free": "free", "__libc_malloc": "malloc", "__libc_calloc": "calloc",
	"__libc_realloc": "realloc", "__libc_memalign": "memalign", "__libc_valloc": "valloc", "__libc_pvalloc": "pvalloc",
}

// aliasName maps glibc's internal aliases (__GI_name, from the debug
// symbols perf reads) and the aliases above to the exported name.
func aliasName(s string) string {
	if a, ok := aliases[s]; ok {
		return a
	}
	if t, ok := strings.CutPrefix(s, "__GI_"); ok && t != "" {
		return t
	}
	// glibc's memcpy variants are aliases of the memmove ones.
	if t, ok := strings.CutPrefix(s, "__memcpy_"); ok && t != "" {
		return "__memmove_" + t
	}
	return s
}

// unbracket drops the angle brackets around a leading Rust type of an
// inherent method, which perf's demangler prints
// (<std::thread::Thread>::new) and probee's does not (std::thread::Thread::new);
// a trait method's <T as Trait>:: is kept.
func unbracket(s string) string {
	if !strings.HasPrefix(s, "<") {
		return s
	}
	depth := 0
	for i, c := range s {
		switch c {
		case '<':
			depth++
		case '>':
			if depth--; depth == 0 {
				inner := s[1:i]
				if !strings.HasPrefix(s[i+1:], "::") || strings.Contains(inner, " as ") {
					return s
				}
				return inner + s[i+1:]
			}
		}
	}
	return s
}

// stripParams drops the parameter list (and a trailing const) of a
// demangled C++ name: probee prints node::Start(int, char**) where perf
// script prints node::Start. Names that do not end in a parameter list
// ("v8::internal::(anonymous namespace)::Invoke", JS frames) are kept.
func stripParams(s string) string {
	t := strings.TrimSuffix(s, " const")
	if !strings.HasSuffix(t, ")") || strings.HasPrefix(t, "JS:") {
		return s
	}
	depth := 0
	for i := len(t) - 1; i > 0; i-- {
		switch t[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return t[:i]
			}
		}
	}
	return s
}

// ParseProbee reads probee's collapsed stacks: `probe;comm;root;...;leaf N`.
func ParseProbee(r io.Reader) (Profile, error) {
	var p Profile
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		count, err := strconv.ParseUint(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			return nil, fmt.Errorf("probee line %d: no sample count at the end: %q", n, line)
		}
		f := strings.Split(line[:i], ";")
		if len(f) < 2 {
			return nil, fmt.Errorf("probee line %d: want probe;comm;frames, got %q", n, line[:i])
		}
		if launchers[f[1]] || slices.Contains(f, exitTeardown) {
			continue
		}
		s := Stack{Comm: f[1], Count: count}
		for _, name := range f[2:] {
			if fr, ok := probeeFrame(name); ok {
				s.Frames = append(s.Frames, fr)
			}
		}
		p = append(p, s)
	}
	return p, sc.Err()
}

// probeeFrame parses one frame of probee's collapsed output; ok is false
// for what is not a physical user frame.
func probeeFrame(name string) (fr Frame, ok bool) {
	switch {
	case name == "[truncated]", name == "[exiting]", name == "[in execve]",
		strings.HasSuffix(name, "_[k]"), strings.HasSuffix(name, " (inlined)"):
		return Frame{}, false
	case name == "[unknown]", addressRE.MatchString(name):
		return Frame{}, true
	}
	if m := moduleOffRE.FindStringSubmatch(name); m != nil {
		off, _ := strconv.ParseUint(m[2], 16, 64)
		return Frame{Module: m[1], Offset: off}, true
	}
	return Frame{Name: normName(name)}, true
}

// ParsePerf reads `perf script -F comm,tid,ip,sym,dso --no-inline`: per
// sample a header "comm tid" at the start of a line, then frames
// "ip sym (dso)", indented, leaf first.
func ParsePerf(r io.Reader) (Profile, error) {
	var p Profile
	var cur *Stack
	flush := func() {
		if cur != nil && !launchers[cur.Comm] {
			reverse(cur.Frames)
			p = append(p, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case line[0] != ' ' && line[0] != '\t':
			flush()
			cur = &Stack{Comm: perfComm(line), Count: 1}
		case cur == nil:
			return nil, fmt.Errorf("perf line %d: a frame before any sample header: %q", n, line)
		default:
			fr, ok, err := perfFrame(line)
			if err != nil {
				return nil, fmt.Errorf("perf line %d: %w", n, err)
			}
			if ok {
				cur.Frames = append(cur.Frames, fr)
			}
		}
	}
	flush()
	return p, sc.Err()
}

// perfComm is the comm of a header line "comm tid" (comms may hold spaces).
func perfComm(line string) string {
	line = strings.TrimSpace(line)
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return line
	}
	if _, err := strconv.Atoi(line[i+1:]); err != nil {
		return line
	}
	return strings.TrimSpace(line[:i])
}

// perfFrame parses "ip sym (dso)"; ok is false for kernel frames and the
// end-of-chain marker (addresses with the top bit set).
func perfFrame(line string) (fr Frame, ok bool, err error) {
	line = strings.TrimSpace(line)
	ipText, rest, _ := strings.Cut(line, " ")
	ip, err := strconv.ParseUint(ipText, 16, 64)
	if err != nil {
		return Frame{}, false, fmt.Errorf("want \"ip sym (dso)\", got %q", line)
	}
	if ip >= 1<<63 {
		return Frame{}, false, nil
	}
	sym, dso := splitDSO(rest)
	if sym != "[unknown]" && sym != "" {
		fr.Name = normName(sym)
	}
	if dso != "" && dso != "[unknown]" {
		fr.Module, fr.Offset = path.Base(dso), ip
	}
	return fr, true, nil
}

// splitDSO splits "sym (dso)" at the parenthesis that closes the line,
// counting nested ones: both names may hold parentheses.
func splitDSO(s string) (sym, dso string) {
	if !strings.HasSuffix(s, ")") {
		return s, ""
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
			}
		}
	}
	return s, ""
}

func reverse(f []Frame) {
	for i, j := 0, len(f)-1; i < j; i, j = i+1, j-1 {
		f[i], f[j] = f[j], f[i]
	}
}
