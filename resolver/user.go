package resolver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// resolveUser resolves uprobe and uretprobe specs.
func (r *Resolver) resolveUser(spec probespec.Spec) ([]AttachPoint, error) {
	if spec.IsSource() && spec.Ret {
		return nil, fmt.Errorf("%s:%d: a return probe cannot be placed on a source line: use uretprobe on the function instead", spec.Source.File, spec.Source.Line)
	}
	paths, where, err := r.userObjects(spec.Target)
	if err != nil {
		return nil, err
	}
	objs, err := r.loadObjects(spec.Target, paths)
	if err != nil {
		return nil, err
	}
	if spec.IsSource() {
		return r.resolveSource(spec, objs, where)
	}
	m, err := compileMatcher(spec.Matcher)
	if err != nil {
		return nil, err
	}
	var ts []AttachPoint
	for _, o := range objs {
		if ts, err = matchObject(ts, o, m, spec); err != nil {
			return nil, err
		}
	}
	if len(ts) == 0 {
		return nil, &NoMatchError{What: "function", Pattern: spec.Matcher.Pattern, Where: where,
			Suggestions: suggest(spec.Matcher.Pattern, objectNames(objs, spec.Matcher.Kind))}
	}
	return ts, nil
}

// loadObjects reads paths in parallel. An explicit path must be a readable
// ELF file; files found by searching that are not ELF are skipped.
func (r *Resolver) loadObjects(t probespec.Target, paths []string) ([]*objfile.Object, error) {
	objs, errs := r.idx.LoadAll(paths)
	var out []*objfile.Object
	for i, err := range errs {
		switch {
		case err == nil:
			out = append(out, objs[i])
		case t.Kind == probespec.TargetPath:
			return nil, fmt.Errorf("resolve %s: %w", t.Name, err)
		case !errors.Is(err, objfile.ErrNotELF):
			r.warnf("skipping %s: %v", paths[i], err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no readable ELF file among %s", strings.Join(paths, ", "))
	}
	return out, nil
}

// userObjects lists the ELF files a user-space spec searches and a short
// description of them for messages.
func (r *Resolver) userObjects(t probespec.Target) ([]string, string, error) {
	var all, names []string // names: the files' names for library matching (nil: their paths')
	var where string
	var err error
	switch {
	case t.Kind == probespec.TargetPath:
		p, err := filepath.Abs(t.Name)
		if err != nil {
			return nil, "", err
		}
		if r.scope.PID > 0 && filepath.IsAbs(t.Name) {
			if p, err = r.pathInProcess(r.scope.PID, p); err != nil {
				return nil, "", err
			}
		}
		if _, err := os.Stat(p); err != nil {
			return nil, "", fmt.Errorf("resolve %s: %w", t.Name, err)
		}
		return []string{p}, filepath.Base(p), nil
	case r.scope.PID > 0:
		all, names, err = r.pidObjects(r.scope.PID)
		where = fmt.Sprintf("pid %d", r.scope.PID)
	case len(r.scope.Command) > 0:
		var exe string
		if exe, err = r.commandPath(r.scope.Command[0]); err == nil {
			all, err = r.neededClosure(exe)
		}
		where = filepath.Base(r.scope.Command[0]) + " and its libraries"
	case t.Kind == probespec.TargetLib:
		all = r.systemLibs(t.Name)
		if len(all) == 0 {
			return nil, "", fmt.Errorf("library %q not found in the ld.so.cache or %s: give its path (/path/to/lib%s.so)",
				t.Name, strings.Join(defaultLibDirs, ", "), strings.TrimPrefix(t.Name, "lib"))
		}
		return all, describe(all), nil
	default:
		all = r.allCachedLibs()
		return all, fmt.Sprintf("the %d libraries of the ld.so.cache", len(all)), nil
	}
	if err != nil {
		return nil, "", err
	}
	if t.Kind != probespec.TargetLib {
		return all, where, nil
	}
	return filterLib(t.Name, all, names, where)
}

// filterLib keeps the files of all whose name (names[i], else the path's)
// matches library name, or is name exactly: the program of -p or -- CMD
// (bash:execute_command -- bash) is no library, but names itself so.
func filterLib(name string, all, names []string, where string) ([]string, string, error) {
	var out, bases []string
	for i, p := range all {
		base := filepath.Base(p)
		if names != nil {
			base = filepath.Base(names[i])
		}
		bases = append(bases, base)
		if base == name || LibNameMatches(name, base) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("library %q is not loaded by %s (it has: %s)", name, where, strings.Join(bases, ", "))
	}
	return out, describe(out), nil
}

// describe names a list of files briefly.
func describe(paths []string) string {
	var b []string
	for _, p := range paths {
		b = append(b, filepath.Base(p))
	}
	if len(b) > 4 {
		return fmt.Sprintf("%d files (%s, ...)", len(b), strings.Join(b[:4], ", "))
	}
	return strings.Join(b, ", ")
}

// pidObjects lists the files pid maps executable, each once, by a path
// that opens the mapped file (procmaps.File: the path its maps show when
// it names that file, else through /proc/PID/root or /proc/PID/map_files;
// in a container, its own library, never the host's file of that name),
// with the names its maps give them, for matching library names.
func (r *Resolver) pidObjects(pid int) (paths, names []string, err error) {
	maps, err := r.readMaps(pid)
	if err != nil {
		return nil, nil, err
	}
	seen := map[procmaps.FileKey]bool{}
	for _, m := range maps {
		if !m.Exec() || !m.File() || seen[m.FileKey()] {
			continue
		}
		seen[m.FileKey()] = true
		p, err := r.mappedFile(pid, m)
		if err != nil {
			r.warnf("skipping a file of pid %d: %v", pid, err)
			continue
		}
		paths, names = append(paths, p), append(names, m.Path)
	}
	switch {
	case len(seen) == 0:
		return nil, nil, fmt.Errorf("pid %d maps no program file: a kernel thread, or a process that has exited (a zombie), has no user code to probe", pid)
	case len(paths) == 0:
		return nil, nil, fmt.Errorf("none of the %d files pid %d maps could be opened", len(seen), pid)
	}
	return paths, names, nil
}

// mappedFile is the path that opens the file m (a mapping of pid) maps.
func (r *Resolver) mappedFile(pid int, m procmaps.Mapping) (string, error) {
	return procmaps.File(r.rootPath(""), pid, m)
}

func (r *Resolver) readMaps(pid int) ([]procmaps.Mapping, error) {
	p := r.rootPath(fmt.Sprintf("/proc/%d/maps", pid))
	f, err := os.Open(p)
	if err != nil {
		return nil, mapsError(pid, p, err)
	}
	defer f.Close()
	return procmaps.Parse(f)
}

// mapsError explains why pid's maps file at path could not be read.
func mapsError(pid int, path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no process with pid %d: check the pid", pid)
	}
	return fmt.Errorf("read %s: %w (run as root)", path, err)
}
