package doccheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownLinks checks every relative link of every markdown file.
func TestMarkdownLinks(t *testing.T) {
	root := repoRoot(t)
	c := &checker{root: root, ids: map[string]map[string]bool{}}
	for _, md := range repoFiles(t, root, ".md") {
		text, err := os.ReadFile(filepath.Join(root, md))
		if err != nil {
			t.Fatal(err)
		}
		links, _ := scanMarkdown(string(text))
		for _, l := range links {
			if err := c.check(filepath.Join(root, md), l.Target); err != nil {
				t.Errorf("%s:%d: link %q: %v", md, l.Line, l.Target, err)
			}
		}
	}
}

var (
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	goRefRE  = regexp.MustCompile(`([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)(#[A-Za-z0-9_-]*[A-Za-z0-9_])?\b`)
)

// TestGoDocRefs checks every markdown path (with an optional #anchor) that a
// Go comment mentions, relative to the Go file's directory or the repository
// root. Paths inside URLs are not checked.
func TestGoDocRefs(t *testing.T) {
	root := repoRoot(t)
	c := &checker{root: root, ids: map[string]map[string]bool{}}
	for _, goFile := range repoFiles(t, root, ".go") {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, goFile), nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", goFile, err)
		}
		for _, cg := range f.Comments {
			for _, cm := range cg.List {
				line := fset.Position(cm.Slash).Line
				for i, text := range strings.Split(cm.Text, "\n") {
					for _, ref := range goRefs(text) {
						if err := c.checkGoRef(filepath.Join(root, goFile), ref); err != nil {
							t.Errorf("%s:%d: %q: %v", goFile, line+i, ref, err)
						}
					}
				}
			}
		}
	}
}

// goRefs returns the markdown paths that a line of comment text mentions.
func goRefs(text string) []string {
	var out []string
	for _, m := range goRefRE.FindAllStringIndex(text, -1) {
		if !inURL(text, m[0]) {
			out = append(out, text[m[0]:m[1]])
		}
	}
	return out
}

// inURL reports whether the word around s[i] has a scheme (https://...).
func inURL(s string, i int) bool {
	word := s[strings.LastIndexAny(s[:i], " \t(<\"'`")+1 : i]
	return strings.Contains(word, ":")
}

// checker resolves link targets, caching the heading ids of markdown files.
type checker struct {
	root string
	ids  map[string]map[string]bool // absolute path -> heading ids
}

// check resolves target as a link of the markdown file from (absolute).
func (c *checker) check(from, target string) error {
	if schemeRE.MatchString(target) {
		return nil
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Errorf("bad escape: %w", err)
	}
	abs := from // "#anchor" is a heading of the same file
	switch {
	case strings.HasPrefix(p, "/"):
		abs = filepath.Join(c.root, p)
	case p != "":
		abs = filepath.Join(filepath.Dir(from), p)
	}
	return c.exists(abs, anchor)
}

// checkGoRef resolves ref from a Go file: its directory first, then the root.
func (c *checker) checkGoRef(from, ref string) error {
	p, anchor, _ := strings.Cut(ref, "#")
	local := filepath.Join(filepath.Dir(from), p)
	if _, err := os.Stat(local); err == nil && inside(c.root, local) {
		return c.exists(local, anchor)
	}
	return c.exists(filepath.Join(c.root, p), anchor)
}

// exists checks that abs is a file or directory in the repository and, for
// a markdown file, that anchor (if any) is one of its heading ids.
func (c *checker) exists(abs, anchor string) error {
	rel, _ := filepath.Rel(c.root, abs)
	if !inside(c.root, abs) {
		return fmt.Errorf("points outside the repository (%s): link to a file in the repository", rel)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("%s does not exist", rel)
	}
	if anchor == "" || !strings.HasSuffix(abs, ".md") {
		return nil
	}
	ids, err := c.headingIDs(abs)
	if err != nil {
		return err
	}
	if !ids[anchor] {
		return fmt.Errorf("%s has no heading with id %q", rel, anchor)
	}
	return nil
}

func TestGoRefs(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"// Package p parses the language of docs/spec-language.md: the", []string{"docs/spec-language.md"}},
		{"// see README.md#layout and ../a_b.md.", []string{"README.md#layout", "../a_b.md"}},
		{"// https://github.com/o/r/blob/main/README.md is a URL", nil},
		{"// x.mdx and *.md are not paths", nil},
	}
	for _, tt := range tests {
		if got := goRefs(tt.line); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("goRefs(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func (c *checker) headingIDs(abs string) (map[string]bool, error) {
	if ids, ok := c.ids[abs]; ok {
		return ids, nil
	}
	text, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	_, ids := scanMarkdown(string(text))
	c.ids[abs] = ids
	return ids, nil
}
