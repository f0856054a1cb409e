package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// privateApt runs apt-get and apt-cache with their own sources list, package
// lists and download cache under dir, so that kernels of other Debian
// releases are reached without touching the machine's apt configuration.
type privateApt struct {
	dir   string // tests/vm/cache/apt/<suite>
	suite string
}

// debianMirror is the Debian archive the machine's sources name (its
// deb822 URIs or one-line deb entries), else deb.debian.org.
func debianMirror() string {
	for _, f := range []string{"/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if u := mirrorIn(b); u != "" {
			return u
		}
	}
	return "http://deb.debian.org/debian"
}

// mirrorIn returns the first archive URI of a sources file that is not the
// security archive.
func mirrorIn(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var uri string
		switch {
		case len(f) >= 2 && f[0] == "URIs:":
			uri = f[1]
		case len(f) >= 3 && f[0] == "deb":
			uri = f[1]
			if strings.HasPrefix(uri, "[") { // deb [options] URI suite
				for i, w := range f {
					if strings.HasSuffix(w, "]") && i+1 < len(f) {
						uri = f[i+1]
						break
					}
				}
			}
		}
		if strings.HasSuffix(strings.TrimRight(uri, "/"), "/debian") {
			return strings.TrimRight(uri, "/")
		}
	}
	return ""
}

func (a privateApt) options() []string {
	return []string{
		"-o", "Dir::Etc::sourcelist=" + filepath.Join(a.dir, "sources.list"),
		"-o", "Dir::Etc::sourceparts=-",
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "Dir::State::status=/dev/null",
		"-o", "APT::Sandbox::User=root",
	}
}

// setup writes the sources list of the suite.
func (a privateApt) setup() error {
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return err
		}
	}
	src := fmt.Sprintf("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n", debianMirror(), a.suite)
	return os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(src), 0o644)
}

func (a privateApt) update() error {
	if err := a.setup(); err != nil {
		return err
	}
	cmd := exec.Command("apt-get", append(a.options(), "update", "-qq")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get update for %s: %w (run make vmtest as root on Debian, with network access)", a.suite, err)
	}
	return nil
}

// dependsOn resolves a metapackage to the package it depends on today.
func (a privateApt) dependsOn(meta string) (string, error) {
	out, err := exec.Command("apt-cache", append(a.options(), "depends", meta)...).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends %s (%s): %w", meta, a.suite, err)
	}
	return linuxImageIn(out)
}

func linuxImageIn(out []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "Depends:" && strings.HasPrefix(f[1], "linux-image-") {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("apt-cache depends names no linux-image package")
}

// download fetches pkg's .deb into dir.
func (a privateApt) download(pkg, dir string) error {
	cmd := exec.Command("apt-get", append(a.options(), "download", "-q", pkg)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get download %s: %w (check the network)", pkg, err)
	}
	return nil
}
