package fileid

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A file whose reading never ends (a FUSE file its server never answers)
// costs its caller the time budget, then SlowFileTime once SlowFiles such
// files were met; the reading is left behind.
func TestBounded(t *testing.T) {
	oldFile, oldSlow, oldN := FileTime, SlowFileTime, SlowFiles
	FileTime, SlowFileTime, SlowFiles = 200*time.Millisecond, 20*time.Millisecond, 2
	late.n = 0
	defer func() { FileTime, SlowFileTime, SlowFiles, late.n = oldFile, oldSlow, oldN, 0 }()
	if v, err := Bounded("quick", func() (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("a quick read: %d, %v", v, err)
	}
	never := make(chan struct{})
	defer close(never)
	stuck := func() (int, error) { <-never; return 1, nil }
	for i, want := range []time.Duration{FileTime, FileTime, SlowFileTime, SlowFileTime} {
		start := time.Now()
		_, err := Bounded("/fuse/lib.so", stuck)
		took := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "/fuse/lib.so") {
			t.Fatalf("stuck file %d: %v, want ErrTimeout naming it", i, err)
		}
		if took < want || took > want+time.Second {
			t.Errorf("stuck file %d took %v, want its budget %v", i, took, want)
		}
	}
}
