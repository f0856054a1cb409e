package fileid

import (
	"errors"
	"fmt"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

// A file past a budget is warned about once; other errors not at all.
func TestWarningsOnce(t *testing.T) {
	var got []string
	w := Warnings{Printf: func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) }}
	over := fmt.Errorf("a.so: %w", safeelf.ErrBudget)
	for range 2 {
		if !w.Budget(over) {
			t.Error("a budget error was not one")
		}
	}
	if w.Budget(errors.New("gone")) {
		t.Error("another error was taken for a budget's")
	}
	if len(got) != 1 {
		t.Errorf("warnings %q, want one", got)
	}
	var quiet Warnings
	quiet.Budget(over) // nil Printf: discarded
}
