package unwind

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// This file parses `readelf --debug-dump=frames-interp`, the oracle the
// evaluated rows are checked against.

type oracleRow struct {
	loc  uint64
	cols map[string]string // column name (CFA, rbp, ra) -> value
}

type oracleFDE struct {
	section    string
	offset     uint64
	cie        uint64
	start, end uint64
	rows       []oracleRow // last row per location
}

type oracleCIE struct {
	aug string
	row *oracleRow
}

type oracle struct {
	fdes []*oracleFDE
	cies map[string]map[uint64]*oracleCIE // section -> offset -> CIE
}

var (
	reSection = regexp.MustCompile(`^Contents of the (\S+) section`)
	reCIE     = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE "([^"]*)"`)
	reFDE     = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)`)
	reRow     = regexp.MustCompile(`^[0-9a-f]{16} `)
)

func runReadelf(path string) (*oracle, error) {
	// readelf exits 1 without a message on some system libraries (it fails
	// to follow .gnu_debuglink); the dump on stdout is complete regardless.
	out, err := exec.Command("readelf", "--debug-dump=frames-interp", path).Output()
	if err != nil && !bytes.Contains(out, []byte("Contents of the")) {
		return nil, fmt.Errorf("readelf --debug-dump=frames-interp %s: %w", path, err)
	}
	return parseReadelf(out)
}

func parseReadelf(out []byte) (*oracle, error) {
	o := &oracle{cies: map[string]map[uint64]*oracleCIE{}}
	var section string
	var header []string
	var fde *oracleFDE
	var cie *oracleCIE
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := reSection.FindStringSubmatch(line); m != nil {
			section, fde, cie = m[1], nil, nil
			o.cies[section] = map[uint64]*oracleCIE{}
			continue
		}
		if m := reCIE.FindStringSubmatch(line); m != nil {
			fde, cie = nil, &oracleCIE{aug: m[2]}
			o.cies[section][hexu(m[1])] = cie
			continue
		}
		if m := reFDE.FindStringSubmatch(line); m != nil {
			cie = nil
			fde = &oracleFDE{section: section, offset: hexu(m[1]), cie: hexu(m[2]), start: hexu(m[3]), end: hexu(m[4])}
			o.fdes = append(o.fdes, fde)
			continue
		}
		fields := rowFields(line)
		if len(fields) > 0 && fields[0] == "LOC" {
			header = fields
			continue
		}
		if !reRow.MatchString(line) || len(fields) != len(header) {
			continue
		}
		row := oracleRow{loc: hexu(fields[0]), cols: map[string]string{}}
		for i := 1; i < len(fields); i++ {
			row.cols[header[i]] = fields[i]
		}
		switch {
		case fde != nil:
			if n := len(fde.rows); n > 0 && fde.rows[n-1].loc == row.loc {
				fde.rows[n-1] = row
			} else {
				fde.rows = append(fde.rows, row)
			}
		case cie != nil:
			cie.row = &row
		}
	}
	return o, sc.Err()
}

// rowFields splits a row, keeping "r9 (r9)" (a register rule) as one field.
func rowFields(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "(") && len(out) > 0 {
			out[len(out)-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

func hexu(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}

// expectation is what a readelf row must evaluate to. exp is set when the
// CFA is an expression: any of PLT, signal or unsupported is accepted there
// and counted by kind.
type expectation struct {
	rule       Rule
	exp        bool
	rbpUnknown bool // readelf "u": never mentioned (same) or undefined
}

func expect(row *oracleRow, signal bool) expectation {
	if signal {
		return expectation{rule: ruleSignal}
	}
	raInRDI := false // glibc's vfork: the return address is kept in rdi
	switch ra := row.cols["ra"]; ra {
	case "c-8":
	case "u":
		return expectation{rule: ruleEnd}
	case "r5 (rdi)":
		raInRDI = true
	default:
		return expectation{rule: ruleUnsupported}
	}
	var e expectation
	cfa := row.cols["CFA"]
	switch {
	case cfa == "exp":
		return expectation{exp: true}
	case strings.HasPrefix(cfa, "rsp+"), strings.HasPrefix(cfa, "rsp-"):
		e.rule.CFA, e.rule.CFAOffset = CFARSP, atoi32(cfa[3:])
	case strings.HasPrefix(cfa, "rbp+"), strings.HasPrefix(cfa, "rbp-"):
		e.rule.CFA, e.rule.CFAOffset = CFARBP, atoi32(cfa[3:])
	case strings.HasPrefix(cfa, "rbx+"), strings.HasPrefix(cfa, "rbx-"):
		e.rule.CFA, e.rule.CFAOffset = CFARBX, atoi32(cfa[3:])
	default:
		reg, off, ok := cfaRegister(cfa)
		if !ok {
			return expectation{rule: ruleUnsupported}
		}
		e.rule.CFA, e.rule.Reg, e.rule.CFAOffset = CFAReg, reg, off
	}
	if raInRDI && e.rule.CFA != CFARSP {
		return expectation{rule: ruleUnsupported}
	} else if raInRDI {
		e.rule.CFA = CFARSPRetRDI
	}
	switch rbp, ok := row.cols["rbp"]; {
	case !ok, rbp == "u":
		e.rbpUnknown = true
	case rbp == "s":
	case strings.HasPrefix(rbp, "c+"), strings.HasPrefix(rbp, "c-"):
		e.rule.RBP, e.rule.RBPOffset = RBPOffset, atoi32(rbp[1:])
	default:
		e.rule.RBP = RBPUndefined
	}
	if rbx := row.cols["rbx"]; strings.HasPrefix(rbx, "c-") {
		if off := atoi32(rbx[1:]); off%8 == 0 && off >= -1024 {
			e.rule.RBXSlot = int8(off / 8)
		}
	}
	return e
}

// cfaRegister parses readelf's "r11+1048592": another general register
// and its offset.
func cfaRegister(cfa string) (uint8, int32, bool) {
	i := strings.IndexAny(cfa, "+-")
	if i < 0 {
		return 0, 0, false
	}
	for n, name := range dwarfRegNames {
		if name == cfa[:i] {
			return uint8(n), atoi32(cfa[i:]), true
		}
	}
	return 0, 0, false
}

func atoi32(s string) int32 {
	v, _ := strconv.ParseInt(s, 10, 32)
	return int32(v)
}

// matches reports whether got satisfies e.
func (e expectation) matches(got Rule) bool {
	if e.exp {
		return got.CFA == CFAPLT || got.CFA == CFASignal || got.CFA == CFAUnsupported
	}
	if e.rbpUnknown && (got.RBP == RBPSame || got.RBP == RBPUndefined) {
		got.RBP = RBPSame
	}
	return got == e.rule
}
