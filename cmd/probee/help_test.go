package main

import (
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the help block of README.md")

// -h and --help print exactly the help text on stdout, also among other
// arguments, and exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"--uprobe", "malloc", "--help"}, {"-l", "libc:malloc", "-h"}, {"-h", "--", "./app"},
	} {
		out, errs, code := probee(t, args...)
		if code != 0 || out != helpText || errs != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %.80q...; want exit 0 and the help text", args, code, errs, out)
		}
	}
}

// helpFlag is a flag name in the help text: -F, --list-probes.
var helpFlag = regexp.MustCompile(`(?:^|[\s\[(|/,])(--?[A-Za-z][\w-]*)`)

// The help text names every flag probee has, and only those.
func TestHelpNamesEveryFlag(t *testing.T) {
	inHelp := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(helpText, -1) {
		inHelp[m[1]] = true
	}
	defined := map[string]bool{}
	newFlagSet(&config{}, io.Discard).VisitAll(func(f *flag.Flag) {
		defined[dashes(f.Name)+f.Name] = true
	})
	for name := range defined {
		if !inHelp[name] {
			t.Errorf("flag %s is not in the help text", name)
		}
	}
	for name := range inHelp {
		if !defined[name] {
			t.Errorf("the help text names %s, which is not a flag", name)
		}
	}
}

// Every example of the help text is a valid command line.
func TestHelpExamples(t *testing.T) {
	_, rest, _ := strings.Cut(helpText, "\nExamples:\n")
	block, _, _ := strings.Cut(rest, "\n\n")
	n := 0
	for _, line := range strings.Split(block, "\n") {
		words := exampleWords(line)
		if len(words) == 0 || words[0] != "probee" {
			t.Errorf("example %q does not start with probee", line)
			continue
		}
		if _, err := parseArgs(words[1:], io.Discard); err != nil {
			t.Errorf("example %q: %v", line, err)
		}
		n++
	}
	if n < 5 {
		t.Errorf("%d examples found in the help text, want at least 5", n)
	}
}

// exampleWords splits an example line into words: single quotes group, and
// three spaces outside quotes start the description.
func exampleWords(line string) []string {
	line = strings.TrimSpace(line)
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			if strings.HasPrefix(line[i:], "   ") {
				return words
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

func TestExampleWords(t *testing.T) {
	got := exampleWords(`  probee -l 'a b' x''   description 'c'`)
	if want := []string{"probee", "-l", "a b", "x"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

const (
	readmePath = "../../README.md"
	helpBegin  = "<!-- help:begin -->\n"
	helpEnd    = "<!-- help:end -->\n"
)

// README.md's flag reference is the help text: -update rewrites it.
func TestREADMEHelp(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, "\n"+helpBegin)+1, strings.Index(readme, "\n"+helpEnd)+1
	if i == 0 || j < i+len(helpBegin) || strings.Count(readme, helpBegin) != 1 || strings.Count(readme, helpEnd) != 1 {
		t.Fatalf("README.md needs one %q line and, after it, one %q line (under ## Flag reference)",
			strings.TrimSpace(helpBegin), strings.TrimSpace(helpEnd))
	}
	want := "```text\n" + helpText + "```\n"
	got := readme[i+len(helpBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, []byte(readme[:i+len(helpBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's flag reference differs from probee --help at line %d (go test ./cmd/probee -run TestREADMEHelp -update rewrites it):\n got: %q\nwant: %q",
		firstDiff(got, want)+1, line(got, firstDiff(got, want)), line(want, firstDiff(got, want)))
}

// firstDiff is the index of the first line where a and b differ.
func firstDiff(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i
		}
	}
	return min(len(la), len(lb))
}

func line(s string, i int) string {
	if ls := strings.Split(s, "\n"); i < len(ls) {
		return ls[i]
	}
	return "(end of block)"
}
