package output

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// maxNameLen bounds file names derived from labels (before suffixes).
const maxNameLen = 120

// FileNames maps probe labels, in order, to distinct file-name-safe base
// names: characters other than ASCII letters, digits and ". - _ + = , @"
// become '_' (runs collapsed, a '.' right after one included), leading and trailing '_' and '.' are trimmed,
// the length is capped, an empty result becomes "probe", and a name already
// taken (compared case-insensitively) gets "-2", "-3", ... in label order.
// For example "uprobe:/usr/lib/libc.so.6:malloc" -> "uprobe_usr_lib_libc.so.6_malloc".
func FileNames(labels []string) []string {
	used := map[string]bool{}
	out := make([]string, len(labels))
	for i, l := range labels {
		base := safeName(l)
		name := base
		for n := 2; used[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		used[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

func safeName(label string) string {
	var b strings.Builder
	under := false
	for _, r := range label {
		ok := r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune(".-_+=,@", r))
		// a '.' right after a separator ("./fx", "../lib") is a separator too
		if !ok || r == '_' || (r == '.' && (under || b.Len() == 0)) {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		under = false
		b.WriteRune(r)
	}
	s := strings.Trim(b.String(), "_.")
	if len(s) > maxNameLen {
		s = strings.TrimRight(s[:maxNameLen], "_.")
	}
	if s == "" {
		return "probe"
	}
	return s
}

// writeDir writes the per-probe files and the indexes into tx's
// directory, creating it when Plan found it missing.
func writeDir(tx *txn, p *Profile, opts Options) error {
	dir, err := tx.mkdirs()
	if err != nil {
		return err
	}
	single := opts
	single.WithProbe = false
	labels := ProbeLabels(p)
	names := FileNames(labels)
	for i, l := range labels {
		keep := forProbe(l)
		err := tx.file(dir, names[i]+".folded", func(w io.Writer) error {
			return collapseTree(p, single, keep).writeCollapsed(w)
		})
		if err == nil {
			err = tx.file(dir, names[i]+".svg", func(w io.Writer) error { return renderSVG(w, probeDoc(p, l, single)) })
		}
		if err != nil {
			return err
		}
	}
	err = tx.file(dir, "index.txt", func(w io.Writer) error {
		return writeIndexText(w, p, labels, names)
	})
	if err != nil {
		return err
	}
	return tx.file(dir, "index.html", func(w io.Writer) error {
		return writeIndexHTML(w, p, labels, names)
	})
}

// writeIndexText writes one tab-separated line per probe, in command-line
// order: label, count, collapsed file, flamegraph file.
func writeIndexText(w io.Writer, p *Profile, labels, names []string) error {
	fmt.Fprintf(w, "# probe\t%s\tfolded\tsvg\n", p.unit())
	for i, l := range labels {
		fmt.Fprintf(w, "%s\t%d\t%s.folded\t%s.svg\n", Sanitize(l), p.total(forProbe(l)), names[i], names[i])
	}
	if d := p.dropSummary(); d != "" {
		fmt.Fprintf(w, "# %s\n", d)
	}
	return nil
}

// writeIndexHTML writes a page linking each probe's flamegraph and stacks.
func writeIndexHTML(w io.Writer, p *Profile, labels, names []string) error {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probee: %d probes</title>\n"+
		"<style>body{font-family:sans-serif;margin:2em}td,th{padding:.2em 1em;text-align:left}"+
		"td.n{text-align:right}</style></head><body>\n<h1>probee: %s %s</h1>\n<table>\n"+
		"<tr><th>probe</th><th>%s</th><th>flamegraph</th><th>stacks</th></tr>\n",
		len(labels), thousands(p.total(nil)), p.unit(), p.unit())
	for i, l := range labels {
		n := html.EscapeString(names[i])
		fmt.Fprintf(w, "<tr><td><code>%s</code></td><td class=\"n\">%s</td>"+
			"<td><a href=\"%s.svg\">%s.svg</a></td><td><a href=\"%s.folded\">%s.folded</a></td></tr>\n",
			html.EscapeString(l), thousands(p.total(forProbe(l))), n, n, n, n)
	}
	fmt.Fprintf(w, "</table>\n")
	if d := p.dropSummary(); d != "" {
		fmt.Fprintf(w, "<p>%s</p>\n", html.EscapeString(d))
	}
	_, err := fmt.Fprintf(w, "</body></html>\n")
	return err
}
