# probee - see README.md. Every target installs what it needs (Debian).
GO       ?= go
BIN      := bin/probee
export CGO_ENABLED := 0

.PHONY: all build test deps fixtures generate generate-check lint bench fuzz clean vmtest backends backends-background test-push

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/probee

# Debian packages the build, the fixtures and the tests need (no-op when present).
deps:
	@tests/install-deps.sh

fixtures: deps
	$(MAKE) -C tests/fixtures

# Regenerates the committed bpf2go output (clang 14 from Debian).
generate: deps
	$(GO) generate ./bpf/...

generate-check: generate
	@git diff --quiet --exit-code -- bpf/ || { git diff --stat -- bpf/; \
		echo "generated BPF files differ from the committed ones: run 'make generate' and commit" >&2; exit 1; }

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "$$out"; \
		echo "gofmt needed: run 'gofmt -w' on the files above" >&2; exit 1; fi
	$(GO) vet ./...

# Pyroscope v1.21.1 and Parca v0.28.0 for the push e2e tests, built from
# Go modules into ~/.cache/probee/backends (PROBEE_BACKENDS_DIR), once:
# with the Go caches warm about 4 + 7 minutes on 2 cores; on a fresh
# machine beside make test's other tests about 29 minutes (both at once,
# modules downloaded), measured before they were compiled without
# optimization (-N -l), which took Parca's build alone from 502 s to 346 s.
# See tests/backends/build.sh.
backends:
	@nice -n 10 tests/backends/build.sh

# Under PROBEE_REQUIRE_KERNEL=1 (CI) make test starts the backend build in
# the background first, runs every other test meanwhile, then waits for
# the build and runs the push e2e tests (test-push). Elsewhere they skip
# when the backends were not built (make backends).
backends-background:
	@if [ "$$PROBEE_REQUIRE_KERNEL" = 1 ]; then tests/backends/build.sh --background; fi

test-push: fixtures
	@if [ "$$PROBEE_REQUIRE_KERNEL" = 1 ]; then nice -n 10 tests/backends/build.sh; fi
	$(GO) test -count=1 -timeout 10m -run '^TestPush' ./tests/e2e

# Unit and root e2e tests, then the kernel-probe tests in a VM (make vmtest)
# when this user can run it (root installs qemu; otherwise qemu must be
# there). Under PROBEE_REQUIRE_KERNEL=1 (CI) the VM tests always run.
# The push e2e tests come last, so that a backend build started in the
# background (CI on a machine without them) has the other tests' time.
test: backends-background generate-check lint fixtures build
	PROBEE_PUSH_TESTS=later $(GO) test -count=1 -timeout 25m ./...
	@if [ "$$(id -u)" = 0 ] || [ "$$PROBEE_REQUIRE_KERNEL" = 1 ] || command -v qemu-system-x86_64 >/dev/null; then \
		$(MAKE) --no-print-directory vmtest; \
	else echo "skipping make vmtest: needs qemu-system-x86 (apt-get install qemu-system-x86) or root" >&2; fi
	@$(MAKE) --no-print-directory test-push

bench: fixtures build
	@tests/install-deps.sh bench
	@tests/bench/run.sh

# Kernel-probe e2e tests inside Debian's kernel under qemu (the host has no
# kprobes): see tests/vm/doc.go. The first run downloads the kernel into
# tests/vm/cache/. VMTEST_FLAGS: e.g. -run 'TestKprobe.*' or -timeout 15m.
VMTEST_FLAGS ?=
vmtest: deps
	$(GO) run ./tests/vm $(VMTEST_FLAGS)

# Short fuzz pass over every fuzz target (FUZZTIME=10m for the long runs).
FUZZTIME ?= 30s
fuzz:
	@tests/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
	$(MAKE) -C tests/fixtures clean
