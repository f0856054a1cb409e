#!/bin/sh
# BPF program sizes: each program's instruction count (8-byte slots, as the
# kernel counts them) against its budget, in the current and the legacy
# build, from the committed objects (no kernel needed). The budgets and why
# they are what they are: bpf/insncount_test.go (TestInstructionBudget).
set -e
cd "$(dirname "$0")/../.."
go test -count=1 -run '^TestInstructionBudget$' -v ./bpf |
	sed -n 's/^ *insncount_test.go:[0-9]*: //p'
