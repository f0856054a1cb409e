package resolver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/probee/probee/internal/parallel"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver/usdt"
)

// AttachPoint is one concrete place a probe attaches to.
type AttachPoint struct {
	Kind probespec.Kind `json:"-"`
	Ret  bool           `json:"ret,omitempty"`

	// User space (uprobe/uretprobe).
	Path       string   `json:"path,omitempty"`      // ELF file to attach to (openable by probee)
	BuildID    string   `json:"build_id,omitempty"`  // hex
	Symbol     string   `json:"symbol,omitempty"`    // raw name that matched (kernel: function name)
	Demangled  string   `json:"demangled,omitempty"` // "" from Resolve: see DemangledName
	Aliases    []string `json:"aliases,omitempty"`   // other names at the same address
	Address    uint64   `json:"address,omitempty"`   // st_value of Symbol (kernel: kallsyms address when readable)
	FileOffset uint64   `json:"file_offset,omitempty"`
	Offset     uint64   `json:"offset,omitempty"` // bytes into the function
	Size       uint64   `json:"size,omitempty"`
	SourceFile string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"`
	SymbolFrom string   `json:"symbol_from,omitempty"` // file the symbol was read from (a debug file, say)
	Go         bool     `json:"go,omitempty"`          // in a Go binary: returns are probed at RET instructions (ReturnSites)
	Unwinds    bool     `json:"-"`                     // in an object that unwinds (Object.Unwinds): returns are best probed at RET instructions
	RetInsn    bool     `json:"ret_insn,omitempty"`    // a RET instruction of the function (Offset): its return, before it happens

	// Kernel.
	Module string `json:"module,omitempty"` // kprobe: "" for vmlinux

	// Tracepoint: Category and Name. USDT probe: Provider and Name, and
	// every site it fires at (its arguments parsed: usdt.Arg).
	Category string      `json:"category,omitempty"`
	Provider string      `json:"provider,omitempty"`
	Name     string      `json:"name,omitempty"`
	Sites    []usdt.Site `json:"sites,omitempty"`
}

// DemangledName returns t.Demangled, else the demangled Symbol of a
// user-space target ("" when not mangled). Resolve leaves Demangled empty:
// demangling every target made listing big C++ libraries slow, and only
// -v, --json and demangled matching need the names.
func (t AttachPoint) DemangledName() string {
	if t.Demangled != "" || t.Kind != probespec.Uprobe {
		return t.Demangled
	}
	full, _ := objfile.DemangleName(t.Symbol)
	return full
}

// ProbeAddress is the address (st_value + Offset) the probe fires at.
func (t AttachPoint) ProbeAddress() uint64 { return t.Address + t.Offset }

// KindName is the canonical kind word: uprobe, uretprobe, kprobe,
// kretprobe, tracepoint or usdt.
func (t AttachPoint) KindName() string {
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
// kprobe:[module:]function[+0xOFF], tracepoint:category:name,
// usdt:/abs/path:provider:name.
func (t AttachPoint) String() string {
	var buf [160]byte
	return string(t.appendLine(buf[:0]))
}

// appendLine appends String() to b.
func (t *AttachPoint) appendLine(b []byte) []byte {
	switch t.Kind {
	case probespec.Tracepoint:
		b = append(b, "tracepoint:"...)
		b = append(b, t.Category...)
		b = append(b, ':')
		return append(b, t.Name...)
	case probespec.USDT:
		b = append(b, "usdt:"...)
		b = append(b, t.Path...)
		b = append(b, ':')
		b = append(b, t.Provider...)
		b = append(b, ':')
		return append(b, t.Name...)
	case probespec.Kprobe:
		b = append(b, t.KindName()...)
		b = append(b, ':')
		if t.Module != "" {
			b = append(b, t.Module...)
			b = append(b, ':')
		}
		b = append(b, t.Symbol...)
		return appendOffset(b, t.Offset)
	}
	b = append(b, t.KindName()...)
	b = append(b, ':')
	b = append(b, t.Path...)
	b = append(b, ':')
	if t.Symbol == "" {
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, t.Address, 16)
	} else {
		b = append(b, t.Symbol...)
	}
	return appendOffset(b, t.Offset)
}

func appendOffset(b []byte, off uint64) []byte {
	if off == 0 {
		return b
	}
	return strconv.AppendUint(append(b, "+0x"...), off, 16)
}

// targetLines returns String() of each target, cut from one string: one
// allocation for all the lines of a listing instead of one per target.
func targetLines(ts []AttachPoint) []string {
	size := 0
	for i := range ts {
		size += maxLineLen(&ts[i])
	}
	var all strings.Builder
	all.Grow(size)
	line := make([]byte, 0, 256)
	ends := make([]int, len(ts))
	for i := range ts {
		line = ts[i].appendLine(line[:0])
		all.Write(line)
		ends[i] = all.Len()
	}
	s := all.String() // no copy
	lines := make([]string, len(ts))
	start := 0
	for i, end := range ends {
		lines[i], start = s[start:end], end
	}
	return lines
}

// maxLineLen bounds len(t.String()): its strings, separators, and up to
// two hex numbers with their prefixes.
func maxLineLen(t *AttachPoint) int {
	return len("tracepoint:") + len(t.Path) + len(t.Symbol) + len(t.Module) + len(t.Category) + len(t.Provider) + len(t.Name) + 2 + 2*(3+16)
}

// WriteList writes one canonical target per line. verbose adds the
// address, file offset, size, demangled name, source line and the file the
// symbol came from when it is not Path; for a USDT probe, its number of
// sites and one indented line per site (address, file offset, semaphore,
// arguments). Lines are built in
// one scratch buffer as they are written: libLLVM's list is 4 MB.
func WriteList(w io.Writer, targets []AttachPoint, verbose bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if verbose {
		writeVerbose(bw, targets)
	} else {
		writePlain(bw, targets)
	}
	return bw.Flush()
}

func writeVerbose(w *bufio.Writer, targets []AttachPoint) {
	width := 0
	var line []byte
	for i := range targets {
		line = targets[i].appendLine(line[:0])
		width = max(width, len(line))
	}
	names := demangledNames(targets)
	for i, t := range targets {
		t.Demangled = names[i]
		line = t.appendLine(line[:0])
		if d := verboseDetails(t); d != "" {
			fmt.Fprintf(w, "%-*s  %s\n", width, line, d)
			continue
		}
		w.Write(line)
		w.WriteByte('\n')
	}
}

// writePlain writes canonical lines; targets that print the same (static
// functions of one name in several compilation units) get their address,
// so every line names one place.
func writePlain(w *bufio.Writer, targets []AttachPoint) {
	same := repeatedLines(targets)
	var line []byte
	for i := range targets {
		line = targets[i].appendLine(line[:0])
		w.Write(line)
		if same[string(line)] {
			fmt.Fprintf(w, "  addr=0x%x", targets[i].ProbeAddress())
		}
		w.WriteByte('\n')
	}
}

// repeatedLines returns the lines more than one target prints. Line
// hashes are compared first, so only the lines whose hash repeats are
// kept, and then compared whole.
func repeatedLines(targets []AttachPoint) map[string]bool {
	seed := maphash.MakeSeed()
	hashes := make([]uint64, len(targets))
	var line []byte
	for i := range targets {
		line = targets[i].appendLine(line[:0])
		hashes[i] = maphash.Bytes(seed, line)
	}
	sorted := slices.Clone(hashes)
	slices.Sort(sorted)
	count := map[string]int{}
	for i, h := range hashes {
		if k, _ := slices.BinarySearch(sorted, h); k+1 < len(sorted) && sorted[k+1] == h {
			count[string(targets[i].appendLine(line[:0]))]++
		}
	}
	same := map[string]bool{}
	for l, n := range count {
		same[l] = n > 1
	}
	return same
}

// demangledNames returns DemangledName of each target, demangling on all
// CPUs (listing libLLVM -v demangles 34000 names).
func demangledNames(targets []AttachPoint) []string {
	names := make([]string, len(targets))
	parallel.For(len(targets), 512, func(i int) { names[i] = targets[i].DemangledName() })
	return names
}

func verboseDetails(t AttachPoint) string {
	switch t.Kind {
	case probespec.Tracepoint:
		return ""
	case probespec.USDT:
		return usdtDetails(t)
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

// jsonAttachPoint adds the kind word to AttachPoint's JSON.
type jsonAttachPoint struct {
	Kind string `json:"kind"`
	AttachPoint
}

// WriteJSON writes one JSON object per line (JSON Lines), in order.
func WriteJSON(w io.Writer, targets []AttachPoint) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	names := demangledNames(targets)
	for i, t := range targets {
		t.Demangled = names[i]
		if err := enc.Encode(jsonAttachPoint{Kind: t.KindName(), AttachPoint: t}); err != nil {
			return err
		}
	}
	return bw.Flush()
}
