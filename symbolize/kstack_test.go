package symbolize

import (
	"slices"
	"testing"

	"github.com/probee/probee/output"
)

func TestTrimBPFFrames(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"task stack of a syscall tracepoint",
			[]string{"get_callchain_entry_for_task", "bpf_get_task_stack", "bpf_prog_0123456789abcdef_probee_tracepoint", "perf_call_bpf_enter.isra.0", "perf_syscall_enter", "syscall_trace_enter.constprop.0", "do_syscall_64"},
			[]string{"perf_syscall_enter", "syscall_trace_enter.constprop.0", "do_syscall_64"}},
		{"a stack from the context", []string{"vfs_read", "ksys_read", "do_syscall_64"}, []string{"vfs_read", "ksys_read", "do_syscall_64"}},
		{"a kprobe on what a BPF program calls keeps it",
			[]string{"htab_map_lookup_elem", "bpf_prog_0123456789abcdef_x", "trace_call_bpf", "kprobe_perf_func"},
			[]string{"htab_map_lookup_elem", "bpf_prog_0123456789abcdef_x", "trace_call_bpf", "kprobe_perf_func"}},
		{"a BTF tracepoint's stack from its context",
			[]string{"bpf_prog_0123456789abcdef_probee_offcpu", "bpf_trace_run4", "__bpf_trace_sched_switch", "__schedule", "schedule", "do_nanosleep"},
			[]string{"__schedule", "schedule", "do_nanosleep"}},
		{"a function named like the dispatch is kept", []string{"bpf_prog_1_x", "bpf_trace_run_x", "f"}, []string{"bpf_trace_run_x", "f"}},
		{"nothing but machinery", []string{"bpf_get_task_stack", "bpf_prog_1_y"}, []string{}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs []output.Frame
			for _, n := range tt.in {
				fs = append(fs, output.Frame{Name: n, Kernel: true})
			}
			got := []string{}
			for _, f := range TrimBPFFrames(fs) {
				got = append(got, f.Name)
			}
			if tt.want == nil && len(got) == 0 {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("TrimBPFFrames = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInterruptEntry(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want int
	}{
		{"a timer's wake-up, over the idle task",
			[]string{"try_to_wake_up", "hrtimer_wakeup", "__hrtimer_run_queues", "hrtimer_interrupt", "__sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt", "default_idle", "do_idle"}, 6},
		{"a device's, softirq on the way out",
			[]string{"try_to_wake_up", "blk_mq_end_request", "handle_softirqs", "irq_exit_rcu", "common_interrupt", "asm_common_interrupt", "f"}, 5},
		{"a timer on another interrupt's way out: the timer's entry",
			[]string{"try_to_wake_up", "hrtimer_wakeup", "asm_sysvec_apic_timer_interrupt", "exit_to_user_mode_prepare", "irqentry_exit_to_user_mode", "asm_sysvec_reschedule_ipi"}, 2},
		{"a copy of the entry", []string{"a", "asm_sysvec_apic_timer_interrupt.cold", "c"}, 1},
		{"a thread's own system call", []string{"try_to_wake_up", "pipe_write", "vfs_write", "do_syscall_64", "entry_SYSCALL_64_after_hwframe"}, -1},
		{"a page fault is no interrupt", []string{"try_to_wake_up", "handle_mm_fault", "exc_page_fault", "asm_exc_page_fault"}, -1},
		{"empty", nil, -1},
	}
	for _, tt := range tests {
		var fs []output.Frame
		for _, n := range tt.in {
			fs = append(fs, output.Frame{Name: n, Kernel: true})
		}
		if got := InterruptEntry(fs); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
