package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSelectKernels(t *testing.T) {
	tests := []struct {
		sel  string
		want []string
		err  string
	}{
		{"", []string{"5.10", "6.1", "6.12"}, ""},
		{"5.10", []string{"5.10"}, ""},
		{"6.12, 5.10", []string{"6.12", "5.10"}, ""},
		{"trixie", []string{"6.12"}, ""},
		{"4.19", nil, `VMTEST_KERNELS names kernel "4.19": the matrix has 5.10, 6.1, 6.12`},
	}
	for _, tt := range tests {
		got, err := selectKernels(tt.sel)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("selectKernels(%q) error = %v, want %q", tt.sel, err, tt.err)
			}
			continue
		}
		var vs []string
		for _, r := range got {
			vs = append(vs, r.Version)
		}
		if err != nil || !reflect.DeepEqual(vs, tt.want) {
			t.Errorf("selectKernels(%q) = %v, %v; want %v", tt.sel, vs, err, tt.want)
		}
	}
}

func TestMirrorIn(t *testing.T) {
	tests := []struct{ src, want string }{
		{"Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n", "http://deb.debian.org/debian"},
		{"Types: deb\nURIs: http://deb.debian.org/debian-security\n", ""},
		{"deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ bookworm main\n", "http://mirror.example/debian"},
		{"deb http://ftp.de.debian.org/debian bookworm main\n", "http://ftp.de.debian.org/debian"},
		{"deb https://packages.cloud.google.com/apt cloud-sdk main\n", ""},
	}
	for _, tt := range tests {
		if got := mirrorIn([]byte(tt.src)); got != tt.want {
			t.Errorf("mirrorIn(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestScanConsole(t *testing.T) {
	console := "init: kernel 5.10.0-35-cloud-amd64\r\n=== RUN   TestA\n--- PASS: TestA (1.00s)\n" +
		"--- SKIP: TestB (0.00s)\n    --- FAIL: TestC/sub (0.1s)\n--- FAIL: TestC (0.2s)\nPROBEE-VMTEST-EXIT=1\n"
	res := result{Kernel: release{"5.10", "bullseye"}}
	var out bytes.Buffer
	code := scanConsole(strings.NewReader(console), &out, &res)
	if code != "1" {
		t.Errorf("exit code %q, want 1", code)
	}
	if !reflect.DeepEqual(res.Passed, []string{"TestA"}) || !reflect.DeepEqual(res.Skipped, []string{"TestB"}) ||
		!reflect.DeepEqual(res.Failed, []string{"TestC"}) {
		t.Errorf("results %v %v %v", res.Passed, res.Skipped, res.Failed)
	}
	if !strings.HasPrefix(out.String(), "[5.10] init: kernel 5.10.0-35-cloud-amd64\n[5.10] === RUN") {
		t.Errorf("console copy not prefixed by the kernel:\n%s", out.String())
	}
	if err := summarize([]result{res, {Kernel: release{"6.1", "bookworm"}, Wall: time.Second}}); err == nil ||
		err.Error() != "tests failed on kernel 5.10" {
		t.Errorf("summarize: %v", err)
	}
}
