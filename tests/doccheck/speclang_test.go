package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/probespec"
)

// TestSpecLanguageConformance parses every row of the two tables under
// "Conformance examples" in docs/spec-language.md with probespec.Parse (as -e
// gives them): each example must parse to what its row says, each error
// example must fail with the message its row gives. The parser's own tests
// hold the same examples; this keeps the user reference equal to them.
func TestSpecLanguageConformance(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "spec-language.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Conformance examples\n")
	if !ok {
		t.Fatal("docs/spec-language.md has no \"## Conformance examples\" section")
	}
	rows := tableRows(section)
	var examples, errs int
	for _, r := range rows {
		switch len(r) {
		case 6:
			examples++
			if err := checkExample(r); err != nil {
				t.Errorf("example %s: %v", r[0], err)
			}
		case 2:
			errs++
			if err := checkErrorExample(r); err != nil {
				t.Errorf("error example %s: %v", r[0], err)
			}
		}
	}
	if examples < 10 || errs < 5 {
		t.Errorf("found %d examples and %d error examples: the tables' layout changed", examples, errs)
	}
}

// tableRows returns the cells of the markdown table rows of text (header and
// separator rows excluded), with `code` quotes and \| escapes removed.
func tableRows(text string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| spec |") {
			continue
		}
		line = strings.ReplaceAll(strings.Trim(line, "| "), `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(line, " | ") {
			cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
		}
		rows = append(rows, cells)
	}
	return rows
}

// unquote strips one pair of backticks: "`malloc`" -> "malloc".
func unquote(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "`"), "`") }

// checkExample checks a row: spec, kind, return, target, matcher, offset/line.
func checkExample(r []string) error {
	s, err := probespec.Parse(probespec.Uprobe, unquote(r[0]))
	if err != nil {
		return err
	}
	want := map[string]string{"no": "false", "yes": "true", "-": "false"}
	got := []struct{ what, got, want string }{
		{"kind", s.Kind.String(), r[1]},
		{"return", strconv.FormatBool(s.Ret), want[r[2]]},
		{"target", describeTarget(s.Target, r[3]), r[3]},
		{"matcher", describeMatcher(s, r[4]), r[4]},
		{"offset/line", describePlace(s), r[5]},
	}
	for _, g := range got {
		if g.got != g.want {
			return fmt.Errorf("%s is %q, the table says %q", g.what, g.got, g.want)
		}
	}
	return nil
}

// describeTarget writes t as the table does; a bare "path" (no name) is
// accepted for any path.
func describeTarget(t probespec.Target, cell string) string {
	switch {
	case t.Kind == probespec.TargetNone:
		return "-"
	case t.Kind == probespec.TargetLib:
		return "library `" + t.Name + "`"
	case t.Kind == probespec.TargetPath && cell == "path":
		return "path"
	}
	return t.Kind.String() + " `" + t.Name + "`"
}

// describeMatcher writes the matcher (or source file, or tracepoint) as the
// table does; "demangled glob" stands for any demangled pattern with '*',
// "probe `PROVIDER:NAME`" (or "probe `NAME`") is a USDT probe.
func describeMatcher(s probespec.Spec, cell string) string {
	switch {
	case s.Kind == probespec.Tracepoint:
		return "`" + s.Tracepoint.Category + ":" + s.Tracepoint.Name + "`"
	case s.Kind == probespec.USDT && s.USDT.Provider == "":
		return "probe `" + s.USDT.Name + "`"
	case s.Kind == probespec.USDT:
		return "probe `" + s.USDT.Provider + ":" + s.USDT.Name + "`"
	case s.IsSource():
		return "source `" + s.Source.File + "`"
	case s.Matcher.Kind == probespec.MatchDemangled && cell == "demangled glob" && strings.Contains(s.Matcher.Pattern, "*"):
		return cell
	case s.Matcher.Kind == probespec.MatchDemangled:
		return "demangled `" + s.Matcher.Pattern + "`"
	}
	return s.Matcher.Kind.String() + " `" + s.Matcher.Pattern + "`"
}

func describePlace(s probespec.Spec) string {
	switch {
	case s.Kind == probespec.Tracepoint || s.Kind == probespec.USDT:
		return "-"
	case s.IsSource():
		return "line " + strconv.Itoa(s.Source.Line)
	}
	return strconv.FormatUint(s.Offset, 10)
}

// checkErrorExample checks a row: spec ("(empty)" for ""), message.
func checkErrorExample(r []string) error {
	in := unquote(r[0])
	if in == "(empty)" {
		in = ""
	}
	_, err := probespec.Parse(probespec.Uprobe, in)
	if err == nil {
		return fmt.Errorf("parses, the table says it fails with %q", r[1])
	}
	if !strings.Contains(err.Error(), r[1]) {
		return fmt.Errorf("fails with %q, the table says %q", err, r[1])
	}
	return nil
}
