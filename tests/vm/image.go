package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// image collects the initramfs members. Host files keep their absolute
// paths; symlinks on the way (merged /usr: /lib -> usr/lib, /bin/sh -> dash)
// are recreated as symlinks so the dynamic loader finds libraries where the
// host's binaries expect them.
type image struct {
	entries []entry
	seen    map[string]bool
}

func newImage() *image {
	im := &image{seen: map[string]bool{}}
	for _, d := range []string{"/dev", "/proc", "/sys", "/tmp", "/run", "/etc"} {
		im.dir(d)
	}
	im.add(entry{name: "dev/console", mode: modeChar | 0o600, rdevMajor: 5, rdevMinor: 1})
	return im
}

func (im *image) add(e entry) {
	if im.seen[e.name] {
		return
	}
	im.seen[e.name] = true
	im.entries = append(im.entries, e)
}

// dir adds an absolute directory and its parents.
func (im *image) dir(p string) {
	p = filepath.Clean(p)
	if p == "/" || im.seen[p[1:]] {
		return
	}
	im.dir(filepath.Dir(p))
	im.add(entry{name: p[1:], mode: modeDir | 0o755})
}

// file adds host file src as dst (an absolute path in the image).
func (im *image) file(dst, src string, perm os.FileMode) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	im.dir(filepath.Dir(dst))
	im.add(entry{name: dst[1:], mode: modeFile | uint32(perm.Perm()), hostPath: src, hostPathSize: fi.Size()})
	return nil
}

// hostPath adds the host's p at the same path, recreating every symlink met
// on the way, and returns the real path it ended at.
func (im *image) hostPath(p string) (string, error) {
	return im.walk(filepath.Clean(p), 0)
}

func (im *image) walk(p string, depth int) (string, error) {
	if depth > 16 {
		return "", fmt.Errorf("%s: too many levels of symbolic links", p)
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			im.dir(cur)
			im.add(entry{name: next[1:], mode: modeSymlink | 0o777, data: []byte(target)})
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return im.walk(filepath.Join(append([]string{target}, parts[i+1:]...)...), depth+1)
		}
		if fi.IsDir() {
			im.dir(next)
		} else if i == len(parts)-1 {
			return next, im.file(next, next, fi.Mode())
		}
		cur = next
	}
	return cur, nil
}

// binary adds the host executable or library p and, for dynamically linked
// ELF files, its interpreter and every DT_NEEDED library, recursively.
func (im *image) binary(p string) error {
	real, err := im.hostPath(p)
	if err != nil {
		return fmt.Errorf("add %s to the image: %w", p, err)
	}
	if im.seen["elf:"+real] {
		return nil
	}
	im.seen["elf:"+real] = true
	deps, err := elfDeps(real, filepath.Dir(p))
	if err != nil {
		return fmt.Errorf("libraries of %s: %w", p, err)
	}
	for _, d := range deps {
		if err := im.binary(d); err != nil {
			return err
		}
	}
	return nil
}

// libDirs are the loader's default search directories on Debian x86_64.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// elfDeps returns the interpreter and the resolved DT_NEEDED libraries of
// the ELF file at p; origin replaces $ORIGIN in its RUNPATH/RPATH.
func elfDeps(p, origin string) ([]string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return depsOf(f, origin)
}

func depsOf(f *elf.File, origin string) ([]string, error) {
	var out []string
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("read PT_INTERP: %w", err)
			}
			out = append(out, strings.TrimRight(string(b), "\x00"))
		}
	}
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil || len(needed) == 0 {
		return out, nil // static, or not dynamic at all
	}
	dirs := searchDirs(f, origin)
	for _, n := range needed {
		lib, err := findLib(n, dirs)
		if err != nil {
			return nil, err
		}
		out = append(out, lib)
	}
	return out, nil
}

func searchDirs(f *elf.File, origin string) []string {
	var dirs []string
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vals, _ := f.DynString(tag)
		for _, v := range vals {
			for _, d := range strings.Split(v, ":") {
				dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", origin))
			}
		}
	}
	return append(dirs, libDirs...)
}

func findLib(name string, dirs []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("library %s not found in %s", name, strings.Join(dirs, ":"))
}
