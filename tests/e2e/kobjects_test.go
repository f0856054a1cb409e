package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// kernelState is what a probee run may leave behind in the kernel: its BPF
// programs (named probee_*), the BPF links to them, and tracefs probe events.
type kernelState struct {
	progs  map[uint32]string // id -> name
	links  map[uint32]uint32 // id -> program id
	events string            // uprobe_events + kprobe_events
}

func snapshotKernel(t *testing.T) kernelState {
	t.Helper()
	s := kernelState{progs: probeePrograms(t), links: map[uint32]uint32{}, events: tracefsEvents()}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err == nil && s.progs[uint32(info.Program)] != "" {
			s.links[uint32(it.ID)] = uint32(info.Program)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("list BPF links: %v", err)
	}
	return s
}

func probeePrograms(t *testing.T) map[uint32]string {
	t.Helper()
	progs := map[uint32]string{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return progs
		} else if err != nil {
			t.Fatalf("list BPF programs: %v", err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // unloaded meanwhile
		}
		if info, err := p.Info(); err == nil && strings.HasPrefix(info.Name, "probee_") {
			progs[uint32(id)] = info.Name
		}
		p.Close()
	}
}

func tracefsEvents() string {
	var b strings.Builder
	for _, f := range []string{"uprobe_events", "kprobe_events"} {
		data, err := os.ReadFile(filepath.Join("/sys/kernel/tracing", f))
		if err != nil {
			data, _ = os.ReadFile(filepath.Join("/sys/kernel/debug/tracing", f))
		}
		b.Write(data)
	}
	return b.String()
}

// heldBPF lists the BPF program and link ids whose file descriptors the
// processes in pids hold (all processes when pids is nil): other tests or
// other users of the machine running probee, or its tests, at the same time.
func heldBPF(pids []int) (progs, links map[uint32]bool) {
	progs, links = map[uint32]bool{}, map[uint32]bool{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	if pids != nil {
		dirs = dirs[:0]
		for _, pid := range pids {
			dirs = append(dirs, "/proc/"+strconv.Itoa(pid))
		}
	}
	for _, d := range dirs {
		infos, _ := filepath.Glob(d + "/fdinfo/*")
		for _, fi := range infos {
			data, _ := os.ReadFile(fi)
			for _, line := range strings.Split(string(data), "\n") {
				k, v, _ := strings.Cut(line, ":")
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
				switch {
				case err != nil:
				case k == "prog_id":
					progs[uint32(n)] = true
				case k == "link_id":
					links[uint32(n)] = true
				}
			}
		}
	}
	return progs, links
}

// checkNotInherited fails t if the processes whose command line holds
// marker (a traced command) hold BPF programs or links: they would keep
// probee's probes alive after probee is gone.
func checkNotInherited(t *testing.T, marker string) {
	t.Helper()
	for _, pid := range pidsOf(marker) {
		progs, links := heldBPF([]int{pid})
		if len(progs)+len(links) > 0 {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("the traced command (pid %d: %q) holds %d BPF programs and %d links",
				pid, cmdline, len(progs), len(links))
		}
	}
}

// leaks lists what appeared since before and no live process holds.
func leaks(t *testing.T, before kernelState) []string {
	now := snapshotKernel(t)
	heldProgs, heldLinks := heldBPF(nil)
	var out []string
	for id, name := range now.progs {
		if _, old := before.progs[id]; !old && !heldProgs[id] {
			out = append(out, "program "+strconv.Itoa(int(id))+" "+name)
		}
	}
	for id, prog := range now.links {
		if _, old := before.links[id]; !old && !heldLinks[id] {
			out = append(out, "link "+strconv.Itoa(int(id))+" to "+now.progs[prog])
		}
	}
	if now.events != before.events {
		out = append(out, "tracefs events changed:\n"+before.events+"->\n"+now.events)
	}
	slices.Sort(out)
	return out
}

// checkNoLeaks fails t unless, within a few seconds (the kernel frees
// programs and links asynchronously), no probee program, link or tracefs
// event is left that was not there before.
func checkNoLeaks(t *testing.T, before kernelState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := leaks(t, before)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind after probee exited:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
