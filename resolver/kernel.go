package resolver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"github.com/probee/probee/internal/kallsyms"
	"github.com/probee/probee/probespec"
)

// KernelSymbol is one kernel function: its name and module ("" for the
// core kernel, vmlinux); Addr when the list gives it (kallsyms read with
// CAP_SYSLOG), else 0.
type KernelSymbol struct {
	Addr   uint64
	Name   string
	Module string
}

// kernelFuncs is the list of traceable kernel functions.
type kernelFuncs struct {
	funcs     []KernelSymbol
	source    string // file the list came from
	blacklist map[string]bool
}

// ErrNoTracefs means tracefs is not mounted where we looked.
var ErrNoTracefs = fmt.Errorf("tracefs not mounted: mount it with 'mount -t tracefs tracefs /sys/kernel/tracing'")

// tracefs returns the tracefs directory of the scope, or "".
func (r *Resolver) tracefs() string {
	if r.scope.Tracefs != "" {
		return r.scope.Tracefs
	}
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		p := r.rootPath(d)
		if _, err := os.Stat(filepath.Join(p, "events")); err == nil {
			return p
		}
	}
	return ""
}

// kernelList reads available_filter_functions, or the kallsyms text
// symbols when tracefs or that file is missing, plus the kprobe blacklist.
func (r *Resolver) kernelList() (*kernelFuncs, error) {
	r.kernOnce.Do(func() {
		k := &kernelFuncs{}
		if t := r.tracefs(); t != "" {
			p := filepath.Join(t, "available_filter_functions")
			if f, err := os.Open(p); err == nil {
				k.funcs, r.kernErr = ParseFilterFunctions(f)
				k.source = p
				f.Close()
			}
		}
		if k.source == "" {
			r.kernErr = r.kernelFromKallsyms(k)
		}
		k.blacklist = r.readBlacklist()
		r.kern = k
	})
	return r.kern, r.kernErr
}

func (r *Resolver) kernelFromKallsyms(k *kernelFuncs) error {
	p := r.scope.Kallsyms
	if p == "" {
		p = r.rootPath("/proc/kallsyms")
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("list kernel functions: no available_filter_functions (%w) and %v", ErrNoTracefs, err)
	}
	defer f.Close()
	syms, err := kallsyms.Parse(f)
	if err != nil {
		return err
	}
	seen := map[KernelSymbol]bool{}
	for _, s := range syms {
		key := KernelSymbol{Name: s.Name, Module: s.Module}
		if !seen[key] {
			seen[key] = true
			k.funcs = append(k.funcs, key)
		}
	}
	k.source = p
	return nil
}

func (r *Resolver) readBlacklist() map[string]bool {
	p := r.scope.KprobeBlacklist
	if p == "" {
		p = r.rootPath("/sys/kernel/debug/kprobes/blacklist")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	bl, _ := ParseKprobeBlacklist(f)
	return bl
}

// resolveKernel resolves kprobe and kretprobe specs.
func (r *Resolver) resolveKernel(spec probespec.Spec) ([]AttachPoint, error) {
	if spec.IsSource() {
		return nil, fmt.Errorf("kprobes take function names, not source lines")
	}
	k, err := r.kernelList()
	if err != nil {
		return nil, err
	}
	m, err := compileMatcher(spec.Matcher)
	if err != nil {
		return nil, err
	}
	mod, where := moduleFilter(spec.Target, k.source)
	var ts []AttachPoint
	var names []string
	blocked := 0
	for _, f := range k.funcs {
		if mod != nil && *mod != f.Module {
			continue
		}
		names = append(names, f.Name)
		if !m.matchName(f.Name) {
			continue
		}
		if k.blacklist[f.Name] {
			blocked++
			continue
		}
		ts = append(ts, AttachPoint{Kind: probespec.Kprobe, Ret: spec.Ret, Symbol: f.Name, Module: f.Module, Offset: spec.Offset})
	}
	if len(ts) == 0 && blocked > 0 {
		return nil, fmt.Errorf("every kernel function matching %q (%d) is on the kprobe blacklist", spec.Matcher.Pattern, blocked)
	}
	if len(ts) == 0 {
		return nil, &NoMatchError{What: "kernel function", Pattern: spec.Matcher.Pattern, Where: where, Suggestions: suggest(spec.Matcher.Pattern, names)}
	}
	return ts, nil
}

// moduleFilter returns the module to keep (nil: all; "" is vmlinux).
func moduleFilter(t probespec.Target, source string) (*string, string) {
	if t.Kind != probespec.TargetModule && t.Kind != probespec.TargetLib {
		return nil, source
	}
	m := t.Name
	if m == "vmlinux" {
		m = ""
	}
	return &m, fmt.Sprintf("module %s (%s)", t.Name, source)
}

// resolveTracepoints lists tracefs events/<category>/<name> matching the
// spec's globs.
func (r *Resolver) resolveTracepoints(spec probespec.Spec) ([]AttachPoint, error) {
	t := r.tracefs()
	if t == "" {
		return nil, ErrNoTracefs
	}
	cg, err := glob.Compile(spec.Tracepoint.Category)
	if err != nil {
		return nil, fmt.Errorf("bad tracepoint category %q: %w", spec.Tracepoint.Category, err)
	}
	ng, err := glob.Compile(spec.Tracepoint.Name)
	if err != nil {
		return nil, fmt.Errorf("bad tracepoint name %q: %w", spec.Tracepoint.Name, err)
	}
	events := filepath.Join(t, "events")
	cats, err := os.ReadDir(events)
	if err != nil {
		return nil, fmt.Errorf("list tracepoints: %w", err)
	}
	var ts []AttachPoint
	var all []string
	for _, c := range cats {
		if !c.IsDir() {
			continue
		}
		evs, _ := os.ReadDir(filepath.Join(events, c.Name()))
		for _, e := range evs {
			if !e.IsDir() {
				continue
			}
			all = append(all, c.Name()+":"+e.Name())
			if cg.Match(c.Name()) && ng.Match(e.Name()) {
				ts = append(ts, AttachPoint{Kind: probespec.Tracepoint, Category: c.Name(), Name: e.Name()})
			}
		}
	}
	if len(ts) == 0 {
		pat := spec.Tracepoint.Category + ":" + spec.Tracepoint.Name
		sort.Strings(all)
		return nil, &NoMatchError{What: "tracepoint", Pattern: pat, Where: events, Suggestions: suggest(pat, all)}
	}
	return ts, nil
}

// ParseFilterFunctions reads tracefs available_filter_functions: one
// "name" or "name [module]" per line (or, for available_filter_functions_addrs,
// "addr name [module]"). Names may repeat (static functions of one name in
// several files); duplicates are kept once.
func ParseFilterFunctions(r io.Reader) ([]KernelSymbol, error) {
	var out []KernelSymbol
	seen := map[KernelSymbol]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		s, ok := parseFilterLine(sc.Text())
		if !ok || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read available_filter_functions: %w", err)
	}
	return out, nil
}

func parseFilterLine(line string) (KernelSymbol, bool) {
	f := strings.Fields(line)
	var s KernelSymbol
	if len(f) >= 2 && !strings.HasPrefix(f[1], "[") {
		if _, err := strconv.ParseUint(f[0], 16, 64); err == nil {
			f = f[1:] // available_filter_functions_addrs; address not kept
		}
	}
	if len(f) == 0 || strings.HasPrefix(f[0], "[") {
		return s, false
	}
	s.Name = f[0]
	if len(f) >= 2 {
		s.Module = strings.Trim(f[1], "[]")
	}
	return s, true
}

// ParseKprobeBlacklist reads debugfs kprobes/blacklist lines
// "0xstart-0xend\tname" and returns the blacklisted names.
func ParseKprobeBlacklist(r io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			out[f[1]] = true
		}
	}
	return out, sc.Err()
}
