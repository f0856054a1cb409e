package resolver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on every
// Linux architecture).
const userHZ = 100

// procStart returns field 22 of /proc/PID/stat, the process's start time
// in clock ticks after boot (the fields after the command name, which may
// hold spaces and parentheses, start at field 3).
func procStart(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: no command name", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("%s: %d fields after the command name, want 20", path, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// procNSpid returns the pid of the process in its own pid namespace: the
// last field of "NSpid:" in /proc/PID/status (pid itself on kernels
// without the line, or on the host).
func procNSpid(path string, pid int) int {
	if v, ok := statusField(path, "NSpid:"); ok {
		if n, err := strconv.Atoi(v[len(v)-1]); err == nil && n > 0 {
			return n
		}
	}
	return pid
}

// bootTime returns the wall-clock time of boot ("btime" in /proc/stat),
// zero when unreadable.
func bootTime(path string) time.Time {
	if v, ok := statusField(path, "btime "); ok {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil {
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}

// statusField returns the fields after the first line starting with key.
func statusField(path, key string) ([]string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			v := strings.Fields(rest)
			return v, len(v) > 0
		}
	}
	return nil, false
}
