package main

import (
	"fmt"
	"io"

	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// listProbes prints the targets a spec resolves to; nothing is attached.
func listProbes(cfg *config, stdout, stderr io.Writer) error {
	spec, err := probespec.Parse(probespec.Uprobe, cfg.listSpec)
	if err != nil {
		return specError("--list-probes", cfg.listSpec, err)
	}
	if err := mountKernelFS([]probespec.Spec{spec}, newStatus(stderr, cfg.quiet)); err != nil {
		return err
	}
	if len(cfg.command) > 0 {
		if _, err := startCheck(cfg.command[0]); err != nil {
			return err
		}
	}
	scope := resolver.Scope{PID: cfg.pid, Command: cfg.command}
	targets, err := resolver.Resolve(spec, scope)
	if err != nil {
		return &exitError{1, fmt.Errorf("--list-probes %s: %w", quote(cfg.listSpec), err)}
	}
	if cfg.json {
		return resolver.WriteJSON(stdout, targets)
	}
	return resolver.WriteList(stdout, targets, cfg.verbose)
}
