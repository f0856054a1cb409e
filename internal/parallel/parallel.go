// Package parallel runs the iterations of a loop on all CPUs: the helper
// objfile (demangling) and resolver (listing, USDT notes) share.
package parallel

import (
	"runtime"
	"sync"
)

// For calls f(i) for every i < n, spread over up to GOMAXPROCS
// goroutines, one per perWorker items at least.
func For(n, perWorker int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/perWorker+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}
