package bpf

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -D__TARGET_ARCH_x86" -target amd64 -type count_key -type user_stack -type kernel_stack -type event -type unwind_mapping -type proc_info -type unwind_rule -type file_key -type file_table -type measure -type probe_measure -type lat_key -type lat_stack -type deferred_stack -type hold_key -type limit -type walk_depth -type cookie_bit -type unwind_strategy -type step_index -type maps_gen_index -type measure_kind -type offcpu_state -type offcpu_start -type waker_walk -type lat_untimed -type stack_flag -type pid_flag -type drop_cause -type event_type -type added_kind -type ustack_class -type mapping_flag -type cfa_type -type rbp_type -type vdso_key probee probee.bpf.c -- -I/usr/include/x86_64-linux-gnu

// The same programs for kernels before 5.13 (compat.h): its Go types are
// probee's.
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -D__TARGET_ARCH_x86 -DPROBEE_LEGACY" -target amd64 probeeLegacy probee.bpf.c -- -I/usr/include/x86_64-linux-gnu
