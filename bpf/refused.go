package bpf

import (
	"errors"
	"fmt"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/unwind"
)

// Refused tables (loadTable): a table that does not fit is reported
// once, walked with frame pointers, and tried again once released tables
// have left room it may fit in.

// errRefused marks a table refused before, with no room freed since that
// it could fit in: no new error to report.
var errRefused = wire.ErrTablesStillFull

// refusal is why a table was not placed: the storage elements it needed,
// and ts.freed then.
type refusal struct {
	need, freed uint64
}

// never is a need no room meets: the rules are interned for the session,
// so a table refused for want of rules (or for an error writing the
// storage) is not tried again while its file is known.
const never = ^uint64(0)

// refusalOf records that placing t failed with err.
func (ts *tableStore) refusalOf(t *unwind.Table, err error) refusal {
	need := uint64(len(t.Pages) + len(t.Entries))
	if !errors.Is(err, errPastBudget) {
		need = never
	}
	return refusal{need: need, freed: ts.freed}
}

// retry reports whether a table refused with r may fit now: released
// ranges were made reusable since, and the budget's free part holds its
// elements (a free part in pieces may still refuse it, and says so again).
func (ts *tableStore) retry(r refusal) bool {
	if r.freed == ts.freed || r.need == never {
		return false
	}
	return r.need <= ts.budget/4-min(ts.inUse(), ts.budget/4)
}

// errPastBudget marks a table past the table budget (placeTable).
var errPastBudget = fmt.Errorf("%w in the unwind table budget", wire.ErrTablesFull)
