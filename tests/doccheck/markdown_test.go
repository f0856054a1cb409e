package doccheck

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is one link target of a markdown file, with its 1-based line.
type mdLink struct {
	Line   int
	Target string
}

var (
	headingRE = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	inlineRE  = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]*)`)
	refDefRE  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:[ \t]+(<[^>]*>|\S+)`)
	mdLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// scanMarkdown returns the link targets of a markdown text (inline links and
// images, reference definitions) and the ids GitHub gives its headings.
// Fenced code blocks and code spans hold neither.
func scanMarkdown(text string) ([]mdLink, map[string]bool) {
	var links []mdLink
	ids := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if fence = fenceState(fence, line); fence != "" || isFenceLine(line) {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			id := slug(m[1])
			if n := seen[id]; n > 0 {
				seen[id]++
				id = id + "-" + strconv.Itoa(n)
			} else {
				seen[id] = 1
			}
			ids[id] = true
		}
		plain := stripCodeSpans(line)
		for _, m := range inlineRE.FindAllStringSubmatch(plain, -1) {
			links = append(links, mdLink{i + 1, strings.Trim(m[1], "<>")})
		}
		if m := refDefRE.FindStringSubmatch(plain); m != nil {
			links = append(links, mdLink{i + 1, strings.Trim(m[1], "<>")})
		}
	}
	return links, ids
}

// fenceState returns the open fence marker after line ("" outside fences).
func fenceState(open, line string) string {
	t := strings.TrimLeft(line, " ")
	if open != "" {
		if strings.HasPrefix(t, open) && strings.Trim(t, open[:1]+" \t") == "" {
			return "" // closed by this line
		}
		return open
	}
	for _, m := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, m) {
			return m
		}
	}
	return ""
}

func isFenceLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// stripCodeSpans removes `code` spans (any run of backticks closed by a run
// of the same length); an unclosed run is kept as text.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return b.String() + s
		}
		n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		run := s[i : i+n]
		end := closingRun(s[i+n:], n)
		if end < 0 {
			b.WriteString(s[:i+n])
			s = s[i+n:]
			continue
		}
		b.WriteString(s[:i])
		s = s[i+n+end+len(run):]
	}
}

// closingRun returns the index in s of a run of exactly n backticks, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// slug is GitHub's id for a heading: link markup reduced to its text,
// lower case, punctuation other than '-' and '_' dropped, each space a '-'.
func slug(heading string) string {
	heading = mdLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestScanMarkdown(t *testing.T) {
	text := strings.Join([]string{
		"# probee",
		"See [the spec](docs/spec-language.md#shape) and ![logo](img/x.png \"title\").",
		"`[not](a-link.md)` but [yes](<b c.md>) and [web](https://example.com/x.md).",
		"```",
		"# not a heading [nor](link.md)",
		"```",
		"## Stacks without frame pointers (`--unwind`)",
		"## Outputs (`-o`, repeatable)",
		"## Outputs (`-o`, repeatable)",
		"[ref]: ../ref.md",
		"``a ` [in](code.md) ``[after](after.md)",
	}, "\n")
	links, ids := scanMarkdown(text)
	wantLinks := []mdLink{
		{2, "docs/spec-language.md#shape"}, {2, "img/x.png"},
		{3, "b c.md"}, {3, "https://example.com/x.md"},
		{10, "../ref.md"}, {11, "after.md"},
	}
	if !reflect.DeepEqual(links, wantLinks) {
		t.Errorf("links = %v, want %v", links, wantLinks)
	}
	wantIDs := map[string]bool{"probee": true, "stacks-without-frame-pointers---unwind": true,
		"outputs--o-repeatable": true, "outputs--o-repeatable-1": true}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("ids = %v, want %v", ids, wantIDs)
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Requirements", "requirements"},
		{"pprof, source lines and inline frames", "pprof-source-lines-and-inline-frames"},
		{"Kernel probes (`--kprobe`)", "kernel-probes---kprobe"},
		{"1. Shape", "1-shape"},
		{"See [the parser](probespec/doc.go)", "see-the-parser"},
		{"snake_case and a-b", "snake_case-and-a-b"},
	}
	for _, tt := range tests {
		if got := slug(tt.in); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
