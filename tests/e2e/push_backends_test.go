package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The push e2e tests run the real Pyroscope and Parca, built by
// tests/backends/build.sh (make backends) into backendsDir. Taken at
// package init: TestMain points XDG_CACHE_HOME at a temporary directory.
var backendsDir = func() string {
	if d := os.Getenv("PROBEE_BACKENDS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "probee", "backends")
}()

// backendWait bounds the wait for a backend build in progress (make
// backends in another shell). make test waits for its own build before it
// runs these tests (make test-push), so this stays under go test's timeout.
const backendWait = 8 * time.Minute

// backendBinary returns the path of a built backend, waiting for a build
// that is running. Missing, the test skips (fails under
// PROBEE_REQUIRE_KERNEL=1) with the hint to run make backends.
func backendBinary(t *testing.T, name string) string {
	t.Helper()
	if os.Getenv("PROBEE_PUSH_TESTS") == "later" {
		t.Skip("make test runs the push tests after the others, once the backends are built (make test-push)")
	}
	testgate.Root(t)
	bin := filepath.Join(backendsDir, "bin", name)
	start := time.Now()
	for building(); ; {
		if _, err := os.Stat(bin); err == nil {
			if w := time.Since(start); w > time.Second {
				t.Logf("waited %v for the %s build", w.Round(time.Second), name)
			}
			return bin
		}
		if !building() || time.Since(start) > backendWait {
			break
		}
		time.Sleep(2 * time.Second)
	}
	msg := fmt.Sprintf("%s is missing: run make backends (tests/backends/build.sh; log in %s)", bin, filepath.Dir(bin))
	if testgate.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// building reports whether tests/backends/build.sh is running.
func building() bool {
	b, err := os.ReadFile(filepath.Join(backendsDir, "bin", "building.pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && syscall.Kill(pid, 0) == nil
}

// server is a backend process on 127.0.0.1 with its own temporary storage.
type server struct {
	t     *testing.T
	name  string
	bin   string
	args  []string
	port  int    // HTTP
	ready string // the path that answers 200 once the server is ready
	dir   string
	cmd   *exec.Cmd
	log   *os.File
}

func (s *server) url() string { return fmt.Sprintf("http://127.0.0.1:%d", s.port) }

// freePorts returns n TCP ports free on 127.0.0.1 right now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// start runs the server and waits until its readiness URL answers 200.
func (s *server) start() {
	s.t.Helper()
	var err error
	s.log, err = os.OpenFile(filepath.Join(s.dir, s.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Dir, s.cmd.Stdout, s.cmd.Stderr = s.dir, s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for time.Since(begin) < 2*time.Minute {
		resp, err := http.Get(s.url() + s.ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				s.t.Logf("%s ready on %s in %v", s.name, s.url(), time.Since(begin).Round(time.Millisecond))
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.stop(syscall.SIGKILL)
	log, _ := os.ReadFile(s.log.Name())
	s.t.Fatalf("%s not ready after 2m; log:\n%s", s.name, tail(string(log), 3000))
}

// stop ends the server with sig and waits for it.
func (s *server) stop(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
	s.log.Close()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startPyroscope runs Pyroscope (all components in one process, filesystem
// storage in a temporary directory), every address on 127.0.0.1: it
// otherwise advertises the host's interface address.
func startPyroscope(t *testing.T, extra ...string) *server {
	bin := backendBinary(t, "pyroscope")
	dir := t.TempDir()
	p := freePorts(t, 3)
	const addr = "127.0.0.1"
	s := &server{t: t, name: "pyroscope", bin: bin, port: p[0], ready: "/ready", dir: dir, args: []string{
		"-target=all", "-storage.backend=filesystem",
		"-storage.filesystem.dir=" + filepath.Join(dir, "shared"),
		"-pyroscopedb.data-path=" + filepath.Join(dir, "data"),
		"-compactor.data-dir=" + filepath.Join(dir, "compactor"),
		"-blocks-storage.bucket-store.sync-dir=" + filepath.Join(dir, "sync"),
		"-usage-stats.enabled=false", "-self-profiling.disable-push=true", "-tracing.enabled=false",
		fmt.Sprintf("-server.http-listen-port=%d", p[0]), "-server.http-listen-address=" + addr,
		fmt.Sprintf("-server.grpc-listen-port=%d", p[1]), "-server.grpc-listen-address=" + addr,
		fmt.Sprintf("-memberlist.bind-port=%d", p[2]), fmt.Sprintf("-memberlist.advertise-port=%d", p[2]),
		"-memberlist.bind-addr=" + addr, "-memberlist.advertise-addr=" + addr, "-memberlist.leave-timeout=1s",
		"-distributor.ring.instance-addr=" + addr, "-overrides-exporter.ring.instance-addr=" + addr,
		"-query-frontend.instance-addr=" + addr, "-query-scheduler.ring.instance-addr=" + addr,
		"-store-gateway.sharding-ring.instance-addr=" + addr, "-compactor.ring.instance-addr=" + addr,
		"-ingester.lifecycler.addr=" + addr, "-ingester.min-ready-duration=0",
	}}
	s.args = append(s.args, extra...)
	s.start()
	t.Cleanup(func() { s.stop(syscall.SIGTERM) })
	return s
}

// parcaConfig is Parca's configuration: the debuginfo bucket on the file
// system (profiles are kept in memory).
const parcaConfig = `object_storage:
  bucket:
    type: "FILESYSTEM"
    config:
      directory: "./data"
`

// startParca runs Parca on 127.0.0.1 with in-memory profile storage
// (extra: --enable-persistence to keep them across a restart) and no
// upstream debuginfod (it calls a public one by default).
func startParca(t *testing.T, extra ...string) *server {
	bin := backendBinary(t, "parca")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "parca.yaml"), []byte(parcaConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	p := freePorts(t, 1)
	s := &server{t: t, name: "parca", bin: bin, port: p[0], ready: "/metrics", dir: dir, args: []string{
		"--config-path=" + filepath.Join(dir, "parca.yaml"),
		fmt.Sprintf("--http-address=127.0.0.1:%d", p[0]),
		"--debuginfod-upstream-servers=", "--storage-path=" + filepath.Join(dir, "storage"),
	}}
	s.args = append(s.args, extra...)
	s.start()
	t.Cleanup(func() { s.stop(syscall.SIGTERM) })
	return s
}
