package main

import (
	"fmt"
	"io"

	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
	"github.com/probee/probee/trace"
)

// listProbes prints the targets the specs resolve to, the union of all of
// them, sorted and without duplicates; nothing is attached.
func listProbes(cfg *config, stdout, stderr io.Writer) error {
	specs := make([]probespec.Spec, len(cfg.listSpecs))
	for i, text := range cfg.listSpecs {
		var err error
		if specs[i], err = probespec.Parse(probespec.Uprobe, text); err != nil {
			return specError("--list-probes", text, err)
		}
	}
	if err := trace.MountKernelFS(specs, newStatus(stderr, cfg.quiet, cfg.verbose)); err != nil {
		return err
	}
	if len(cfg.command) > 0 {
		if _, err := trace.CheckCommand(cfg.command[0]); err != nil {
			return err
		}
	}
	res := resolver.New(resolver.Scope{PID: cfg.pid, Command: cfg.command})
	var all []resolver.AttachPoint
	for i, spec := range specs {
		targets, err := res.Resolve(spec)
		if err != nil {
			return &exitError{1, fmt.Errorf("--list-probes %s: %w", trace.Quote(cfg.listSpecs[i]), err)}
		}
		all = append(all, targets...)
	}
	if len(specs) > 1 {
		all = union(all) // one spec's targets come sorted and unique
	}
	if cfg.json {
		return resolver.WriteJSON(stdout, all)
	}
	return resolver.WriteList(stdout, all, cfg.verbose)
}

// union sorts targets and drops the ones listed twice (same canonical line
// and address: two specs matching one function).
func union(ts []resolver.AttachPoint) []resolver.AttachPoint {
	resolver.SortAttachPoints(ts)
	type key struct {
		line string
		addr uint64
	}
	seen := map[key]bool{}
	out := ts[:0]
	for _, t := range ts {
		k := key{t.String(), t.Address}
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}
