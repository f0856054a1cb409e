// Command svc is a toy service that writes in a loop: an access log line
// per request and, every 10 requests, a metrics snapshot. Both end in the
// write system call through different paths; run.sh asks probee which.
//
// Usage: svc [N] [FILE]   (N requests, default 2000; output file, default /dev/null)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := 2000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	path := "/dev/null"
	if len(os.Args) > 2 {
		path = os.Args[2]
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	for i := 0; i < n; i++ {
		handleRequest(f, i)
		if i%10 == 9 {
			flushMetrics(f, i)
		}
	}
}

//go:noinline
func handleRequest(f *os.File, i int) {
	logAccess(f, "GET", "/item/"+strconv.Itoa(i), 200)
}

// logAccess writes one unbuffered line: one write per request.
//
//go:noinline
func logAccess(f *os.File, method, path string, status int) {
	fmt.Fprintf(f, "%s %s %d\n", method, path, status)
}

// flushMetrics builds a snapshot in a buffer and writes it at once.
//
//go:noinline
func flushMetrics(f *os.File, i int) {
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "requests_total %d\n", i+1)
	w.Flush()
}
