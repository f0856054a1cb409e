package resolver

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func uspecUSDT(target probespec.Target, provider, name string) probespec.Spec {
	return probespec.Spec{Kind: probespec.USDT, Target: target, USDT: probespec.USDTName{Provider: provider, Name: name}}
}

// usdtLines names each target FILE:PROVIDER:NAME/SITES.
func usdtLines(ts []AttachPoint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, filepath.Base(t.Path)+":"+t.Provider+":"+t.Name+"/"+string(rune('0'+len(t.Sites))))
	}
	return out
}

func TestResolveUSDT(t *testing.T) {
	bin, lib := maptest.Fixture(t, "usdt-fp"), maptest.Fixture(t, "libusdtfx.so")
	cmd := Scope{Command: []string{bin}}
	for _, c := range []struct {
		name  string
		spec  probespec.Spec
		scope Scope
		want  []string
	}{
		{"path, any provider", uspecUSDT(pathT(bin), "", "*"), Scope{}, []string{"usdt-fp:fx:gated/1", "usdt-fp:fx:multi/2", "usdt-fp:fx:plain/1"}},
		{"path, provider and glob", uspecUSDT(pathT(bin), "fx", "{multi,plain}"), Scope{}, []string{"usdt-fp:fx:multi/2", "usdt-fp:fx:plain/1"}},
		{"provider glob", uspecUSDT(pathT(bin), "f?", "gated"), Scope{}, []string{"usdt-fp:fx:gated/1"}},
		{"command and its libraries", uspecUSDT(probespec.Target{}, "", "*"), cmd, []string{"libusdtfx.so:fxlib:lib_gated/1", "usdt-fp:fx:gated/1", "usdt-fp:fx:multi/2", "usdt-fp:fx:plain/1"}},
		{"library of the command", uspecUSDT(libT("libusdtfx.so"), "fxlib", "lib_gated"), cmd, []string{"libusdtfx.so:fxlib:lib_gated/1"}},
		{"library by path", uspecUSDT(pathT(lib), "", "lib_*"), Scope{}, []string{"libusdtfx.so:fxlib:lib_gated/1"}},
	} {
		ts, err := New(c.scope).Resolve(c.spec)
		if got := usdtLines(ts); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// A target keeps every site with its semaphore and parsed arguments.
func TestResolveUSDTSites(t *testing.T) {
	bin := maptest.Fixture(t, "usdt-fp")
	ts, err := Resolve(uspecUSDT(pathT(bin), "fx", "gated"), Scope{})
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v, %v", ts, err)
	}
	tg := ts[0]
	s := tg.Sites[0]
	if tg.String() != "usdt:"+bin+":fx:gated" || tg.BuildID == "" || s.Semaphore == 0 || s.SemaphoreOffset == 0 || len(s.Args) != 4 {
		t.Errorf("target %s build-id %q site %+v", tg, tg.BuildID, s)
	}
	if a := s.Args[3]; a.String() != "-8@fx_config(%rip)" {
		t.Errorf("fourth argument %s, want -8@fx_config(%%rip)", a)
	}
}

func TestResolveUSDTErrors(t *testing.T) {
	bin := maptest.Fixture(t, "usdt-fp")
	chain := maptest.Fixture(t, "chain-fp")
	for _, c := range []struct {
		spec probespec.Spec
		msg  string
	}{
		{uspecUSDT(pathT(bin), "fx", "gatd"), `no USDT probe matches "fx:gatd" in usdt-fp; did you mean: fx:gated`},
		{uspecUSDT(pathT(chain), "", "*"), `no USDT probe matches "*" in chain-fp, which has none (no .note.stapsdt section)`},
		{uspecUSDT(pathT("/nonexistent/x"), "", "*"), "resolve /nonexistent/x: stat /nonexistent/x: no such file or directory"},
	} {
		_, err := Resolve(c.spec, Scope{})
		var nm *NoMatchError
		if err == nil || err.Error() != c.msg {
			t.Errorf("%s: error %v, want %q", c.spec, err, c.msg)
		} else if strings.HasPrefix(c.msg, "no USDT") && !errors.As(err, &nm) {
			t.Errorf("%s: error %T is not a *NoMatchError", c.spec, err)
		}
	}
}

// With -p, the probes of every file the process maps: the program and
// its library.
func TestResolveUSDTPID(t *testing.T) {
	bin := maptest.Fixture(t, "usdt-fp")
	cmd := exec.Command(bin, "1", "wait")
	in, _ := cmd.StdinPipe()
	errPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	if line, _ := bufio.NewReader(errPipe).ReadString('\n'); !strings.HasPrefix(line, "usdt: ready") {
		t.Fatalf("fixture says %q, want usdt: ready", line)
	}
	ts, err := Resolve(uspecUSDT(probespec.Target{}, "", "*"), Scope{PID: cmd.Process.Pid})
	want := []string{"libusdtfx.so:fxlib:lib_gated/1", "usdt-fp:fx:gated/1", "usdt-fp:fx:multi/2", "usdt-fp:fx:plain/1"}
	if got := usdtLines(ts); err != nil || !slices.Equal(got, want) {
		t.Errorf("pid %d: %v, %v; want %v", cmd.Process.Pid, got, err, want)
	}
	in.Write([]byte("go\ngo\n"))
}
