package unwind

// Row is the rule in force from PC (a virtual address of the ELF file) up to
// the next row's PC or the FDE's end.
type Row struct {
	PC   uint64
	Rule Rule
}

// Rows evaluates the instructions of f, one of fr's FDEs, and appends its
// rows to dst, one per distinct location (when several rows share a
// location the last wins, as in readelf). On error the rows decoded so far
// are returned with it.
func (fr *CFI) Rows(f *FDE, dst []Row) ([]Row, error) {
	var in interp
	return in.rows(fr, f, dst)
}

// rows is Rows with a reusable interpreter (its state stack is kept).
func (in *interp) rows(fr *CFI, f *FDE, dst []Row) ([]Row, error) {
	cie := fr.CIE(f)
	init, err := cie.initialState()
	if err != nil {
		return dst, err
	}
	*in = interp{cie: cie, st: *init, init: init, loc: f.Start, base: fr.instrAddr(f),
		stack: in.stack[:0], fde: f, out: dst, first: len(dst)}
	err = in.run(fr.Instructions(f))
	if err == nil {
		in.emitRow(in.loc, &in.st)
	}
	dst, in.out, in.fde = in.out, nil, nil
	return dst, err
}

// emitRow records the row in force at loc (called before every advance).
func (in *interp) emitRow(loc uint64, st *frameState) {
	f := in.fde
	if f == nil || loc >= f.End || loc < f.Start {
		return
	}
	n := len(in.out)
	if n == in.first || in.out[n-1].PC != loc {
		in.out = append(in.out, Row{PC: loc})
		n++
	}
	setRule(&in.out[n-1].Rule, st, in.cie.Signal)
}
