package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// maxHandOff is how many fds one message to the watchdog carries (the
// kernel's SCM_MAX_FD is 253).
const maxHandOff = 250

// HandOff detaches the probe links as Detach does, but gives the ones it
// can to the watchdog, which closes them once probee has exited: the
// kernel takes 20-40 ms to detach a link (a grace period each, under a
// lock every uprobe registration takes: 300 uprobe_multi links took 13 s
// one after another, 6.8 s 64 at a time), so a run interrupted while
// attaching exits at once instead. The watchdog cannot take a
// per-function perf-event link (its perf event's fd, where the detach
// happens, is not the link's): those, and every link of a session
// without a watchdog, are closed here. It returns how many links the
// watchdog took.
func (s *Session) HandOff() (int, error) {
	s.closeSampling()
	s.mu.Lock()
	links := s.links
	s.links = nil
	s.mu.Unlock()
	var give, keep []link.Link
	for _, l := range links {
		if s.watch != nil && handable(l) {
			give = append(give, l)
		} else {
			keep = append(keep, l)
		}
	}
	given := 0
	var errs []error
	for len(give) > 0 {
		chunk := give[:min(maxHandOff, len(give))]
		give = give[len(chunk):]
		if err := s.watch.take(chunk); err != nil {
			errs = append(errs, err)
			keep = append(keep, chunk...)
			continue
		}
		given += len(chunk)
		s.handedOff = true
		closeLinks(chunk) // the watchdog's copies keep them attached
	}
	errs = append(errs, closeLinks(keep))
	return given, errors.Join(errs...)
}

// handable reports whether closing l's fd detaches it (a BPF link of its
// own, not a perf event's).
func handable(l link.Link) bool {
	if _, ok := l.(interface{ FD() int }); !ok {
		return false
	}
	info, err := l.Info()
	return err == nil && info.Type != link.PerfEventType
}

// leave closes probee's end of the socket without a word and without
// waiting: the watchdog detaches the links it was handed once probee has
// exited, then resumes what their gates stopped.
func (w *watchdog) leave() { w.sock.Close() }

// take sends the watchdog copies of links' fds.
func (w *watchdog) take(links []link.Link) error {
	fds := make([]int, len(links))
	for i, l := range links {
		fds[i] = l.(interface{ FD() int }).FD()
	}
	rc, err := w.sock.SyscallConn()
	if err != nil {
		return fmt.Errorf("hand links to the watchdog: %w", err)
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), []byte{msgLinks}, unix.UnixRights(fds...), nil, 0)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("hand links to the watchdog: %w", err)
	}
	return nil
}
