package resolver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/parallel"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver/usdt"
)

// usdtFile is the USDT view of one ELF file.
type usdtFile struct {
	path, buildID string
	probes        []usdt.Probe
}

// resolveUSDT resolves usdt specs: every probe of the searched files whose
// provider and name match is one target, holding all its sites.
func (r *Resolver) resolveUSDT(spec probespec.Spec) ([]AttachPoint, error) {
	paths, where, err := r.userObjects(spec.Target)
	if err != nil {
		return nil, err
	}
	files, err := r.readUSDTFiles(spec.Target, paths)
	if err != nil {
		return nil, err
	}
	match, err := usdtMatcher(spec.USDT)
	if err != nil {
		return nil, err
	}
	var ts []AttachPoint
	var names []string
	for _, f := range files {
		for _, p := range f.probes {
			names = append(names, p.Provider+":"+p.Name)
			if match(p) {
				ts = append(ts, usdtTarget(f, p))
			}
		}
	}
	if len(ts) == 0 {
		return nil, usdtNoMatch(spec.USDT, where, names)
	}
	return ts, nil
}

func usdtTarget(f usdtFile, p usdt.Probe) AttachPoint {
	return AttachPoint{Kind: probespec.USDT, Path: f.path, BuildID: f.buildID,
		Provider: p.Provider, Name: p.Name, Sites: p.Sites}
}

// usdtMatcher compiles the provider and name globs; an empty provider
// matches every provider.
func usdtMatcher(n probespec.USDTName) (func(usdt.Probe) bool, error) {
	name, err := probespec.Matcher{Kind: probespec.MatchGlob, Pattern: n.Name}.Compile()
	if err != nil {
		return nil, err
	}
	if n.Provider == "" {
		return func(p usdt.Probe) bool { return name.Match(p.Name) }, nil
	}
	prov, err := probespec.Matcher{Kind: probespec.MatchGlob, Pattern: n.Provider}.Compile()
	if err != nil {
		return nil, err
	}
	return func(p usdt.Probe) bool { return prov.Match(p.Provider) && name.Match(p.Name) }, nil
}

func usdtNoMatch(n probespec.USDTName, where string, names []string) error {
	pattern := n.Name
	if n.Provider != "" {
		pattern = n.Provider + ":" + n.Name
	}
	if len(names) == 0 {
		where += ", which has none (no .note.stapsdt section)"
	}
	return &NoMatchError{What: "USDT probe", Pattern: pattern, Where: where, Suggestions: suggest(pattern, names)}
}

// readUSDTFiles reads the USDT notes of paths on all CPUs. An explicit
// path must be a readable ELF file; files found by searching that are not
// ELF are skipped, other failures warned about.
func (r *Resolver) readUSDTFiles(t probespec.Target, paths []string) ([]usdtFile, error) {
	files := make([]usdtFile, len(paths))
	errs := make([]error, len(paths))
	parallel.For(len(paths), 16, func(i int) { files[i], errs[i] = readUSDTFile(paths[i]) })
	out := files[:0]
	for i, err := range errs {
		switch {
		case err == nil:
			out = append(out, files[i])
		case t.Kind == probespec.TargetPath:
			return nil, fmt.Errorf("resolve %s: %w", t.Name, err)
		case !errors.Is(err, objfile.ErrNotELF):
			r.warnf("skipping %s: %v", paths[i], err)
		}
	}
	return out, nil
}

func readUSDTFile(path string) (usdtFile, error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return usdtFile{}, err
	}
	defer f.Close()
	uf := usdtFile{path: path}
	if uf.probes, err = usdt.Read(f.File); err != nil {
		return usdtFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(uf.probes) > 0 {
		err = safeelf.Guard(path, func() error { uf.buildID = elfnote.BuildID(f.File); return nil })
	}
	return uf, err
}

// usdtDetails is the -v text of a USDT target: its site count, then one
// indented line per site.
func usdtDetails(t AttachPoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sites=%d", len(t.Sites))
	for _, s := range t.Sites {
		fmt.Fprintf(&b, "\n    addr=0x%x file_off=0x%x", s.Address, s.FileOffset)
		if s.Semaphore != 0 {
			fmt.Fprintf(&b, " semaphore=0x%x semaphore_off=0x%x", s.Semaphore, s.SemaphoreOffset)
		}
		fmt.Fprintf(&b, " args=%q", s.ArgText)
		if s.ArgsErr != "" {
			fmt.Fprintf(&b, " args_error=%q", s.ArgsErr)
		}
	}
	return b.String()
}
