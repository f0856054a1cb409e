package resolver

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/probee/probee/probespec"
)

// Target is one concrete place a probe attaches to.
type Target struct {
	Kind probespec.Kind `json:"-"`
	Ret  bool           `json:"ret,omitempty"`

	// User space (uprobe/uretprobe).
	Path       string   `json:"path,omitempty"`     // ELF file to attach to (openable by probee)
	BuildID    string   `json:"build_id,omitempty"` // hex
	Symbol     string   `json:"symbol,omitempty"`   // raw name that matched (kernel: function name)
	Demangled  string   `json:"demangled,omitempty"`
	Aliases    []string `json:"aliases,omitempty"` // other names at the same address
	Address    uint64   `json:"address,omitempty"` // st_value of Symbol (kernel: kallsyms address when readable)
	FileOffset uint64   `json:"file_offset,omitempty"`
	Offset     uint64   `json:"offset,omitempty"` // bytes into the function
	Size       uint64   `json:"size,omitempty"`
	SourceFile string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"`
	SymbolFrom string   `json:"symbol_from,omitempty"` // file the symbol was read from (a debug file, say)

	// Kernel.
	Module string `json:"module,omitempty"` // kprobe: "" for vmlinux

	// Tracepoint.
	Category string `json:"category,omitempty"`
	Name     string `json:"name,omitempty"`
}

// ProbeAddress is the address (st_value + Offset) the probe fires at.
func (t Target) ProbeAddress() uint64 { return t.Address + t.Offset }

// KindName is the canonical kind word: uprobe, uretprobe, kprobe,
// kretprobe or tracepoint.
func (t Target) KindName() string {
	switch t.Kind {
	case probespec.Uprobe:
		if t.Ret {
			return "uretprobe"
		}
		return "uprobe"
	case probespec.Kprobe:
		if t.Ret {
			return "kretprobe"
		}
		return "kprobe"
	}
	return t.Kind.String()
}

// String is the canonical one-line form: uprobe:/abs/path:symbol[+0xOFF],
// kprobe:[module:]function[+0xOFF], tracepoint:category:name.
func (t Target) String() string {
	switch t.Kind {
	case probespec.Tracepoint:
		return "tracepoint:" + t.Category + ":" + t.Name
	case probespec.Kprobe:
		s := t.KindName() + ":"
		if t.Module != "" {
			s += t.Module + ":"
		}
		return s + t.Symbol + offSuffix(t.Offset)
	}
	sym := t.Symbol
	if sym == "" {
		sym = fmt.Sprintf("0x%x", t.Address)
	}
	return t.KindName() + ":" + t.Path + ":" + sym + offSuffix(t.Offset)
}

func offSuffix(off uint64) string {
	if off == 0 {
		return ""
	}
	return fmt.Sprintf("+0x%x", off)
}

// WriteList writes one canonical target per line. verbose adds the
// address, file offset, size, demangled name, source line and the file the
// symbol came from when it is not Path, tab-separated.
func WriteList(w io.Writer, targets []Target, verbose bool) error {
	if !verbose {
		return writePlain(w, targets)
	}
	width := 0
	for _, t := range targets {
		width = max(width, len(t.String()))
	}
	for _, t := range targets {
		line := t.String()
		if d := verboseDetails(t); d != "" {
			line = fmt.Sprintf("%-*s  %s", width, line, d)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// writePlain writes canonical lines; targets that print the same (static
// functions of one name in several compilation units) get their address,
// so every line names one place.
func writePlain(w io.Writer, targets []Target) error {
	seen := map[string]int{}
	for _, t := range targets {
		seen[t.String()]++
	}
	for _, t := range targets {
		line := t.String()
		if seen[line] > 1 {
			line += fmt.Sprintf("  addr=0x%x", t.ProbeAddress())
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func verboseDetails(t Target) string {
	if t.Kind == probespec.Tracepoint {
		return ""
	}
	var s string
	if t.Address != 0 {
		s += fmt.Sprintf(" addr=0x%x", t.ProbeAddress())
	}
	if t.Kind == probespec.Uprobe {
		s += fmt.Sprintf(" file_off=0x%x size=%d", t.FileOffset+t.Offset, t.Size)
	}
	if t.Demangled != "" {
		s += fmt.Sprintf(" demangled=%q", t.Demangled)
	}
	if t.SourceFile != "" {
		s += fmt.Sprintf(" source=%s:%d", t.SourceFile, t.Line)
	}
	if t.SymbolFrom != "" && t.SymbolFrom != t.Path {
		s += " from=" + filepath.Clean(t.SymbolFrom)
	}
	if len(t.Aliases) > 0 {
		s += " aliases=" + strings.Join(t.Aliases, ",")
	}
	return strings.TrimPrefix(s, " ")
}

// jsonTarget adds the kind word to Target's JSON.
type jsonTarget struct {
	Kind string `json:"kind"`
	Target
}

// WriteJSON writes one JSON object per line (JSON Lines), in order.
func WriteJSON(w io.Writer, targets []Target) error {
	enc := json.NewEncoder(w)
	for _, t := range targets {
		if err := enc.Encode(jsonTarget{Kind: t.KindName(), Target: t}); err != nil {
			return err
		}
	}
	return nil
}
