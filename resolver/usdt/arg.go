package usdt

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Arg is one argument of a probe site, written "[-]SIZE[f]@OPERAND" in
// the note (GNU as syntax): "-4@%esi" is a signed 4-byte value in %esi,
// "8@-8(%rbp)" an unsigned 8-byte value at rbp-8, "8f@%xmm0" a double in
// %xmm0, "-4@$-1" the constant -1.
type Arg struct {
	Size    uint8   `json:"size"` // bytes: 1, 2, 4, 8 or 16
	Signed  bool    `json:"signed,omitempty"`
	Float   bool    `json:"float,omitempty"`
	Operand Operand `json:"operand"`
}

// OperandKind says where an argument's value is.
type OperandKind uint8

// Operand kinds.
const (
	OpRegister OperandKind = iota + 1 // in Operand.Reg
	OpMemory                          // at Symbol + Disp + Reg + Index*Scale
	OpConstant                        // Symbol + Disp itself (an immediate, $N)
)

func (k OperandKind) String() string {
	switch k {
	case OpRegister:
		return "register"
	case OpMemory:
		return "memory"
	case OpConstant:
		return "constant"
	}
	return "invalid"
}

// Operand is where an argument's value is, as one GNU as operand.
type Operand struct {
	Kind   OperandKind
	Reg    Register // OpRegister: the register; OpMemory: the base (zero: none)
	Index  Register // OpMemory: the index register (zero: none)
	Scale  uint8    // OpMemory: 1, 2, 4 or 8 with an index, else 0
	Disp   int64    // OpMemory: the displacement; OpConstant: the value
	Symbol string   // OpMemory, OpConstant: a symbol Disp is added to ("8@foo+8(%rip)")
}

// MarshalJSON writes the operand's kind and the fields that kind uses.
func (o Operand) MarshalJSON() ([]byte, error) {
	m := map[string]any{"kind": o.Kind.String()}
	if !o.Reg.IsZero() {
		key := "base"
		if o.Kind == OpRegister {
			key = "reg"
		}
		m[key] = o.Reg.String()
	}
	if !o.Index.IsZero() {
		m["index"], m["scale"] = o.Index.String(), o.Scale
	}
	if o.Kind != OpRegister {
		m["disp"] = o.Disp
	}
	if o.Symbol != "" {
		m["symbol"] = o.Symbol
	}
	return json.Marshal(m)
}

// ParseArgs parses a site's argument string: arguments separated by
// spaces, each "[-]SIZE[f]@OPERAND". "" is no argument.
func ParseArgs(text string) ([]Arg, error) {
	var args []Arg
	for _, f := range strings.Fields(text) {
		a, err := ParseArg(f)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	return args, nil
}

// ParseArg parses one argument, "-4@%esi".
func ParseArg(s string) (Arg, error) {
	a, err := parseArg(s)
	if err != nil {
		return Arg{}, fmt.Errorf("argument %q: %w", s, err)
	}
	return a, nil
}

func parseArg(s string) (Arg, error) {
	var a Arg
	size, op, ok := strings.Cut(s, "@")
	if !ok {
		return a, fmt.Errorf("no '@': want SIZE@OPERAND, as in -4@%%esi")
	}
	if rest, neg := strings.CutPrefix(size, "-"); neg {
		a.Signed, size = true, rest
	}
	if rest, fl := strings.CutSuffix(size, "f"); fl {
		a.Float, size = true, rest
	}
	n, err := strconv.ParseUint(size, 10, 8)
	if err != nil || (n != 1 && n != 2 && n != 4 && n != 8 && n != 16) {
		return a, fmt.Errorf("invalid size %q: want 1, 2, 4, 8 or 16 bytes", size)
	}
	a.Size = uint8(n)
	a.Operand, err = parseOperand(op)
	return a, err
}

// parseOperand parses %reg, $imm, or a memory operand
// [DISP][(BASE[,INDEX[,SCALE]])].
func parseOperand(s string) (Operand, error) {
	switch {
	case s == "":
		return Operand{}, fmt.Errorf("missing operand after '@'")
	case s[0] == '%':
		if strings.Contains(s, ":") {
			return Operand{}, fmt.Errorf("segment-relative operands are not supported")
		}
		r, ok := register(s[1:])
		if !ok {
			return Operand{}, fmt.Errorf("unknown register %s", s)
		}
		return Operand{Kind: OpRegister, Reg: r}, nil
	case s[0] == '$':
		sym, n, err := parseDisp(s[1:])
		if err == nil && sym == "" && s[1:] == "" {
			err = fmt.Errorf("missing value after '$'")
		}
		return Operand{Kind: OpConstant, Disp: n, Symbol: sym}, err
	}
	return parseMemory(s)
}

func parseMemory(s string) (Operand, error) {
	o := Operand{Kind: OpMemory}
	disp, regs, paren := strings.Cut(s, "(")
	var err error
	if o.Symbol, o.Disp, err = parseDisp(disp); err != nil {
		return o, err
	}
	if !paren {
		if disp == "" {
			return o, fmt.Errorf("empty memory operand")
		}
		return o, nil
	}
	regs, ok := strings.CutSuffix(regs, ")")
	if !ok || strings.ContainsAny(regs, "()") {
		return o, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	parts := strings.Split(regs, ",")
	if len(parts) > 3 || (len(parts) == 1 && parts[0] == "") {
		return o, fmt.Errorf("want (BASE), (BASE,INDEX) or (BASE,INDEX,SCALE) in %q", s)
	}
	if o.Reg, err = addrRegister(parts[0], true); err != nil {
		return o, err
	}
	if len(parts) == 1 {
		return o, nil
	}
	return o, o.indexScale(parts[1:])
}

// indexScale reads the ",INDEX[,SCALE]" part of a memory operand.
func (o *Operand) indexScale(parts []string) error {
	var err error
	if o.Index, err = addrRegister(parts[0], false); err != nil {
		return err
	}
	if o.Index.IsZero() {
		return fmt.Errorf("missing index register")
	}
	o.Scale = 1
	if len(parts) == 2 {
		n, err := strconv.ParseUint(parts[1], 10, 8)
		if err != nil || (n != 1 && n != 2 && n != 4 && n != 8) {
			return fmt.Errorf("invalid scale %q: want 1, 2, 4 or 8", parts[1])
		}
		o.Scale = uint8(n)
	}
	return nil
}

// addrRegister parses the base or index of a memory operand: "" (none, a
// base only) or a 64- or 32-bit general-purpose register.
func addrRegister(s string, base bool) (Register, error) {
	if s == "" && base {
		return Register{}, nil
	}
	name, ok := strings.CutPrefix(s, "%")
	r, known := register(name)
	switch {
	case !ok || !known:
		return Register{}, fmt.Errorf("invalid address register %q", s)
	case r.ID >= XMM0 || r.Bytes < 4 || (r.ID == RIP && !base):
		return Register{}, fmt.Errorf("%%%s cannot address memory", name)
	}
	return r, nil
}

// parseDisp parses a displacement or immediate: "", a number (decimal or
// 0x-hex, with an optional '-'), a symbol, or SYMBOL+N / SYMBOL-N.
func parseDisp(s string) (sym string, n int64, err error) {
	if s == "" {
		return "", 0, nil
	}
	if isNumberStart(s[0]) {
		n, err = parseNumber(s)
		return "", n, err
	}
	i := strings.IndexAny(s, "+-")
	if i < 0 {
		i = len(s)
	}
	sym = s[:i]
	if !validSymbol(sym) {
		return "", 0, fmt.Errorf("invalid symbol %q", sym)
	}
	if i == len(s) {
		return sym, 0, nil
	}
	num := s[i+1:]
	if s[i] == '-' {
		num = "-" + num
	}
	n, err = parseNumber(num) // rejects "", "-", "--3", "+3"
	return sym, n, err
}

func isNumberStart(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

// parseNumber parses [-]DIGITS or [-]0xHEX into an int64; values of 2^63
// and more (unsigned constants) wrap, as the assembler stores them.
func parseNumber(s string) (int64, error) {
	body, neg := strings.CutPrefix(s, "-")
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(body), "0x"); ok {
		body, base = h, 16
	}
	if body == "" || body[0] == '+' || body[0] == '-' {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	u, err := strconv.ParseUint(body, base, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// validSymbol reports whether s is an assembler symbol name: letters,
// digits, '_', '.' and '$', not starting with a digit.
func validSymbol(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// String writes the argument back in the note's syntax.
func (a Arg) String() string {
	var b strings.Builder
	if a.Signed {
		b.WriteByte('-')
	}
	b.WriteString(strconv.Itoa(int(a.Size)))
	if a.Float {
		b.WriteByte('f')
	}
	b.WriteByte('@')
	b.WriteString(a.Operand.String())
	return b.String()
}

// String writes the operand in GNU as syntax.
func (o Operand) String() string {
	switch o.Kind {
	case OpRegister:
		return "%" + o.Reg.String()
	case OpConstant:
		return "$" + dispString(o.Symbol, o.Disp, true)
	case OpMemory:
		hasRegs := !o.Reg.IsZero() || !o.Index.IsZero()
		s := dispString(o.Symbol, o.Disp, !hasRegs)
		if !hasRegs {
			return s
		}
		s += "("
		if !o.Reg.IsZero() {
			s += "%" + o.Reg.String()
		}
		if !o.Index.IsZero() {
			s += ",%" + o.Index.String() + "," + strconv.Itoa(int(o.Scale))
		}
		return s + ")"
	}
	return "?"
}

// dispString writes SYMBOL[+-N] or N; zero is "" unless zero is set.
func dispString(sym string, n int64, zero bool) string {
	switch {
	case sym == "" && n == 0 && !zero:
		return ""
	case sym == "":
		return strconv.FormatInt(n, 10)
	case n == 0:
		return sym
	case n < 0:
		return sym + "-" + strconv.FormatUint(uint64(-n), 10)
	}
	return sym + "+" + strconv.FormatInt(n, 10)
}
