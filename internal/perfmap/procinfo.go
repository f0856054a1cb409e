package perfmap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/probee/probee/internal/procstat"
)

// userHZ is the unit of the times in /proc/PID/stat.
const userHZ = procstat.UserHZ

// procStart returns the process's start time from its stat file at path,
// in clock ticks after boot.
func procStart(path string) (uint64, error) {
	st, err := procstat.Read(path)
	return st.Start, err
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
