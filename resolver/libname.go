package resolver

import (
	"os"
	"path/filepath"
	"strings"
)

// defaultLibDirs are searched after the ld.so.cache, in glibc's order for
// Debian's multiarch layout.
var defaultLibDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
}

// LibNameMatches reports whether a library file's base name matches a
// library name from a spec, with the rules in the package documentation:
// "libc", "c" and "libc.so.6" match libc.so.6; "libc" never matches
// libcrypto.so.3, libcap.so.2 or libc_malloc_debug.so.0.
func LibNameMatches(name, base string) bool {
	if name == "" {
		return false
	}
	if strings.Contains(name, ".so") {
		return base == name || strings.HasPrefix(base, name+".")
	}
	stems := []string{name}
	if !strings.HasPrefix(name, "lib") {
		stems = append(stems, "lib"+name)
	}
	for _, stem := range stems {
		rest, ok := strings.CutPrefix(base, stem)
		if !ok {
			continue
		}
		if rest == ".so" || strings.HasPrefix(rest, ".so.") {
			return true
		}
		if len(rest) >= 2 && rest[0] == '-' && rest[1] >= '0' && rest[1] <= '9' && strings.Contains(rest, ".so") {
			return true
		}
	}
	return false
}

// systemLibs finds the files for a library name without a process: the
// ld.so.cache first, the default directories when the cache has none.
func (r *Resolver) systemLibs(name string) []string {
	var out []string
	for _, e := range r.ldCache() {
		if LibNameMatches(name, e.Name) || LibNameMatches(name, filepath.Base(e.Path)) {
			out = append(out, r.rootPath(e.Path))
		}
	}
	if len(out) == 0 {
		for _, d := range defaultLibDirs {
			ents, _ := os.ReadDir(r.rootPath(d))
			for _, e := range ents {
				if !e.IsDir() && LibNameMatches(name, e.Name()) {
					out = append(out, filepath.Join(r.rootPath(d), e.Name()))
				}
			}
		}
	}
	return uniqueFiles(out)
}

// allCachedLibs lists every native library of the ld.so.cache.
func (r *Resolver) allCachedLibs() []string {
	var out []string
	for _, e := range r.ldCache() {
		out = append(out, r.rootPath(e.Path))
	}
	return uniqueFiles(out)
}

// ldCache reads <root>/etc/ld.so.cache once, keeping native entries. A
// missing or broken cache is an empty one: the default directories remain.
func (r *Resolver) ldCache() []LdCacheEntry {
	r.ldOnce.Do(func() {
		all, err := ReadLdCache(r.rootPath("/etc/ld.so.cache"))
		if err != nil {
			r.warnf("%v", err)
		}
		for _, e := range all {
			if e.nativeEntry() {
				r.ld = append(r.ld, e)
			}
		}
	})
	return r.ld
}

// uniqueFiles drops paths that do not exist or name a file already listed
// (symlinks, hard links), keeping the first spelling.
func uniqueFiles(paths []string) []string {
	var out []string
	var seen []os.FileInfo
next:
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		for _, s := range seen {
			if os.SameFile(s, st) {
				continue next
			}
		}
		seen = append(seen, st)
		out = append(out, p)
	}
	return out
}
