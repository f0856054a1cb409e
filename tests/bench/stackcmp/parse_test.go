package main

import (
	"reflect"
	"strings"
	"testing"
)

func named(names ...string) []Frame {
	f := make([]Frame, len(names))
	for i, n := range names {
		f[i] = Frame{Name: n}
	}
	return f
}

func TestParseProbee(t *testing.T) {
	tests := []struct {
		name, in string
		want     Profile
	}{
		{"named frames root first", "sample;xz;_start;main;lzma_code 7\n",
			Profile{{Comm: "xz", Frames: named("_start", "main", "lzma_code"), Count: 7}}},
		{"module+offset, bare address and [unknown] are unnamed",
			"sample;xz;xz+0x3ac0;libstdc++.so.6+0x1f;0x40a96e;[unknown] 1\n",
			Profile{{Comm: "xz", Count: 1, Frames: []Frame{
				{Module: "xz", Offset: 0x3ac0}, {Module: "libstdc++.so.6", Offset: 0x1f}, {}, {}}}}},
		{"kernel, inline and [truncated] frames dropped",
			"sample;cc;[truncated];f;g (inlined);h;do_syscall_64_[k];pvm_irq_enable_[k] 3\n",
			Profile{{Comm: "cc", Frames: named("f", "h"), Count: 3}}},
		{"[in execve] and [exiting] markers dropped",
			"sample;sh;[in execve];bprm_execve_[k] 2\nsample;cc;[exiting];f;exit_to_user_mode_loop_[k] 1\n",
			Profile{{Comm: "sh", Count: 2}, {Comm: "cc", Frames: named("f"), Count: 1}}},
		{"names with spaces, symbol version stripped",
			"sample;node;__libc_start_main@@GLIBC_2.34;JS:*fib /tmp/fib.js:1:13;operator new(unsigned long) 2\n",
			Profile{{Comm: "node", Frames: named("__libc_start_main", "JS:*fib /tmp/fib.js:1:13", "operator new"), Count: 2}}},
		{"launcher samples dropped, blank lines skipped",
			"sample;probee;0x40a96e 1\n\nsample;lto cgu.0;clone3 4\n",
			Profile{{Comm: "lto cgu.0", Frames: named("clone3"), Count: 4}}},
		{"exit tear-down samples dropped",
			"sample;xz;[truncated];_Exit;do_exit_[k];__mmput_[k];exit_mmap_[k];unmap_vmas_[k] 8\nsample;xz;_start;main 2\n",
			Profile{{Comm: "xz", Frames: named("_start", "main"), Count: 2}}},
		{"no frames", "sample;xz 5\n", Profile{{Comm: "xz", Count: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProbee(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseProbeeErrors(t *testing.T) {
	for _, in := range []string{"sample;xz;main\n", "sample;xz;main x\n", "onlyprobe 3\n", "7\n"} {
		if _, err := ParseProbee(strings.NewReader(in)); err == nil {
			t.Errorf("ParseProbee(%q): no error", in)
		}
	}
}

const perfText = `xz 20614 
	           fd001 __open64_nocancel (/usr/lib/x86_64-linux-gnu/libc.so.6)
	           3238b setlocale (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            36e3 [unknown] (/usr/bin/xz)
	           27249 __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)
	           27304 __libc_start_main@@GLIBC_2.34 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            3ac0 [unknown] (/usr/bin/xz)

lto cgu.0 21000 
	ffffffff8133c9c0 native_set_pte ([kernel.kallsyms])
	         64541e9 v8::internal::(anonymous namespace)::Invoke (/usr/bin/node)
	         6424000 run+0x1c (/tmp/a (deleted))
	ffffffffffffffff [unknown] ([unknown])
perf-exec 20613 
	ffffffff81000c82 asm_exc_page_fault ([kernel.kallsyms])
node 3 
	    7fa0e40062a0 JS:*fib /tmp/fib.js:1:13 (/tmp/perf-3.map)
	               0 [unknown] ([unknown])
`

func TestParsePerf(t *testing.T) {
	want := Profile{
		{Comm: "xz", Count: 1, Frames: []Frame{
			{Module: "xz", Offset: 0x3ac0},
			{Name: "__libc_start_main", Module: "libc.so.6", Offset: 0x27304},
			{Name: "__libc_start_call_main", Module: "libc.so.6", Offset: 0x27249},
			{Module: "xz", Offset: 0x36e3},
			{Name: "setlocale", Module: "libc.so.6", Offset: 0x3238b},
			{Name: "__open64_nocancel", Module: "libc.so.6", Offset: 0xfd001},
		}},
		{Comm: "lto cgu.0", Count: 1, Frames: []Frame{
			{Name: "run", Module: "a (deleted)", Offset: 0x6424000},
			{Name: "v8::internal::(anonymous namespace)::Invoke", Module: "node", Offset: 0x64541e9},
		}},
		{Comm: "node", Count: 1, Frames: []Frame{
			{},
			{Name: "JS:*fib /tmp/fib.js:1:13", Module: "perf-3.map", Offset: 0x7fa0e40062a0},
		}},
	}
	got, err := ParsePerf(strings.NewReader(perfText))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParsePerfErrors(t *testing.T) {
	for _, in := range []string{"\t1234 main (/bin/x)\n", "x 1\n\tzz main (/bin/x)\n"} {
		if _, err := ParsePerf(strings.NewReader(in)); err == nil {
			t.Errorf("ParsePerf(%q): no error", in)
		}
	}
}

func TestPerfComm(t *testing.T) {
	tests := []struct{ in, want string }{
		{"xz 20614 ", "xz"},
		{"opt cgu.00 21001", "opt cgu.00"},
		{"nopid", "nopid"},
		{"two words", "two words"},
	}
	for _, tt := range tests {
		if got := perfComm(tt.in); got != tt.want {
			t.Errorf("perfComm(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"__libc_start_main@@GLIBC_2.34", "__libc_start_main"},
		{"memcpy@GLIBC_2.2.5", "memcpy"},
		{"main+0x1c", "main"},
		{"get_common_indices.constprop.0", "get_common_indices.constprop.0"},
		{"operator+", "operator+"},
		{"JS:*fib /tmp/fib.js:1:13", "JS:*fib /tmp/fib.js:1:13"},
		{"node::Start(int, char**)", "node::Start"},
		{"v8::Function::Call(v8::Local<v8::Context>, int, v8::Local<v8::Value>*) const", "v8::Function::Call"},
		{"std::function<void (int)>::operator()(int) const", "std::function<void (int)>::operator()"},
		{"v8::internal::(anonymous namespace)::Invoke", "v8::internal::(anonymous namespace)::Invoke"},
		{"f(g(int))", "f"},
		{"__GI___nptl_deallocate_tsd", "__nptl_deallocate_tsd"},
		{"cfree", "free"},
		{"__libc_calloc", "calloc"},
		{"__libc_start_main", "__libc_start_main"},
		{"<std::sys::thread::unix::Thread>::new::thread_start", "std::sys::thread::unix::Thread::new::thread_start"},
		{"<alloc::sync::Arc<dyn core::marker::Sync>>::drop_slow", "alloc::sync::Arc<dyn core::marker::Sync>::drop_slow"},
		{"<rustc_lint::Foo as core::ops::Drop>::drop", "<rustc_lint::Foo as core::ops::Drop>::drop"},
		{"try_execute_query::<SingleCache<ErasedData<[u8; 24]>>, false>", "try_execute_query::<SingleCache<ErasedData<[u8, 24]>>, false>"},
		{"llvm::PassManager<llvm::Module, llvm::AnalysisManager<llvm::Module> >::run(llvm::Module&)", "llvm::PassManager<llvm::Module, llvm::AnalysisManager<llvm::Module>>::run"},
		{"a<b<c<int> > >::f", "a<b<c<int>>>::f"},
		{"__memcpy_avx512_unaligned_erms", "__memmove_avx512_unaligned_erms"},
		// perf script --no-demangle: demangled as probee does.
		{"_ZN4llvm11PassManagerINS_6ModuleENS_15AnalysisManagerIS1_JEEEJEE3runERS1_RS3_", "llvm::PassManager<llvm::Module, llvm::AnalysisManager<llvm::Module>>::run"},
		{"_RINvC1a1fNCNvC1b1g0uE+0x10", "a::f::<b::g::{closure#0}, ()>"},
	}
	for _, tt := range tests {
		if got := normName(tt.in); got != tt.want {
			t.Errorf("normName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
