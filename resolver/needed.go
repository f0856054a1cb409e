package resolver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/probee/probee/objfile"
)

// commandPath finds the command's binary like execvp: a name with a "/" is
// a path, anything else is looked up in $PATH (under the scope's root).
func (r *Resolver) commandPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if filepath.IsAbs(p) {
			p = r.rootPath(p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("command %s: %w", name, err)
		}
		return filepath.Abs(p)
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(r.rootPath(d), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("command %q not found in $PATH: give its path", name)
}

// neededClosure returns exe, its interpreter and every library it loads
// (DT_NEEDED, breadth first, as ld.so does). Libraries that cannot be found
// are reported as warnings: the program would not start, but the rest can
// still be searched.
func (r *Resolver) neededClosure(exe string) ([]string, error) {
	exeObj, err := r.idx.Load(exe)
	if err != nil {
		return nil, err
	}
	out := []string{exe}
	if exeObj.Interp != "" {
		out = append(out, r.rootPath(exeObj.Interp))
	}
	type node struct {
		obj  *objfile.Object
		path string
	}
	queue := []node{{exeObj, exe}}
	seen := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, need := range n.obj.Needed {
			if seen[need] {
				continue
			}
			seen[need] = true
			p := r.findNeeded(need, n.obj, n.path, exeObj, exe)
			if p == "" {
				r.warnf("%s: needed library %s not found", n.path, need)
				continue
			}
			o, err := r.idx.Load(p)
			if err != nil {
				r.warnf("%s: %v", p, err)
				continue
			}
			out = append(out, p)
			queue = append(queue, node{o, p})
		}
	}
	return uniqueFiles(out), nil
}

// findNeeded applies glibc's search order for one DT_NEEDED entry: the
// loader's DT_RPATH (and the executable's) when it has no DT_RUNPATH,
// LD_LIBRARY_PATH, DT_RUNPATH, the ld.so.cache, the default directories.
func (r *Resolver) findNeeded(need string, o *objfile.Object, opath string, exe *objfile.Object, exePath string) string {
	if strings.Contains(need, "/") {
		return existing(need)
	}
	var dirs []string
	if len(o.Runpath) == 0 {
		dirs = append(dirs, r.expandDirs(o.Rpath, opath)...)
		if o != exe && len(exe.Runpath) == 0 {
			dirs = append(dirs, r.expandDirs(exe.Rpath, exePath)...)
		}
	}
	dirs = append(dirs, r.rootDirs(filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")))...)
	dirs = append(dirs, r.expandDirs(o.Runpath, opath)...)
	for _, d := range dirs {
		if p := existing(filepath.Join(d, need)); p != "" {
			return p
		}
	}
	for _, e := range r.ldCache() {
		if e.Name == need {
			if p := existing(r.rootPath(e.Path)); p != "" {
				return p
			}
		}
	}
	for _, d := range r.rootDirs(defaultLibDirs) {
		if p := existing(filepath.Join(d, need)); p != "" {
			return p
		}
	}
	return ""
}

// expandDirs substitutes $ORIGIN, $LIB and $PLATFORM in RPATH/RUNPATH
// entries of the object at opath.
func (r *Resolver) expandDirs(dirs []string, opath string) []string {
	origin := filepath.Dir(opath)
	if real, err := filepath.EvalSymlinks(opath); err == nil {
		origin = filepath.Dir(real)
	}
	rep := strings.NewReplacer(
		"${ORIGIN}", origin, "$ORIGIN", origin,
		"${LIB}", "lib/x86_64-linux-gnu", "$LIB", "lib/x86_64-linux-gnu",
		"${PLATFORM}", "x86_64", "$PLATFORM", "x86_64")
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		x := rep.Replace(d)
		if strings.HasPrefix(d, "$ORIGIN") || strings.HasPrefix(d, "${ORIGIN}") {
			out = append(out, x)
		} else {
			out = append(out, r.rootPath(x))
		}
	}
	return out
}

func (r *Resolver) rootDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d != "" {
			out = append(out, r.rootPath(d))
		}
	}
	return out
}

func existing(p string) string {
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}
