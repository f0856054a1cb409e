package testgate

import (
	"errors"
	"testing"
)

func TestFeatureNilErrorRuns(t *testing.T) {
	Feature(t, "nothing", true, nil) // must neither skip nor fail
}

func TestFeatureMissingSkips(t *testing.T) {
	t.Setenv(EnvRequire, "0")
	ran := false
	t.Run("sub", func(t *testing.T) {
		defer func() { ran = true }()
		Feature(t, "made-up", true, errors.New("no"))
		t.Error("Feature did not skip")
	})
	if !ran {
		t.Fatal("subtest did not run")
	}
}
