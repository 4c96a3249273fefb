# hreader's front door. `make demo` and `make test` install what they need (.ci/deps.sh).
SWIFT      ?= swift
PREFIX     ?= /usr/local
BUILD_DIR  ?= .build
SWIFTFLAGS ?=
# Tests run in worker processes, one test per process: most of a test's time is spent waiting on the
# hreader processes, servers and files it drives, so three workers keep two cores busy.
TEST_WORKERS ?= 3
SHELL      := /bin/bash

.PHONY: all deps schema build release test demo bench install clean fuzz fuzz-smoke torture man deb deb-test release-hreader function-order

all: build

deps:
	@.ci/deps.sh

schema:
	@.ci/embed-schema.sh

build: deps schema
	$(SWIFT) build $(SWIFTFLAGS)

release: deps schema
	$(SWIFT) build -c release $(SWIFTFLAGS)

# The installed hreader (make install, make deb): on Linux it links the Swift runtime and Foundation
# statically, so it runs without the toolchain, and is linked to start fast (.ci/release-build.sh).
# Only that product: the bench and the test servers use FoundationNetworking, whose static form needs
# libcurl's development files.
release-hreader: deps schema
	@SWIFT="$(SWIFT)" BUILD_DIR="$(BUILD_DIR)" SWIFTFLAGS="$(SWIFTFLAGS)" .ci/release-build.sh >/dev/null

# A Debian package (hreader_VERSION_ARCH.deb) of the self-contained release binary, with the man page,
# shell completions, README and copyright; deb-test checks it as a person installing it would get it.
deb: deps schema
	@.ci/deb.sh

# .ci/hreader.order, the layout of the shipped binary's hot code (.ci/gen-function-order.sh): run again
# when the start-up path of the short commands changes. Needs ptrace.
function-order: deps schema
	@.ci/gen-function-order.sh

deb-test: deps schema
	@.ci/deb-test.sh

# Builds everything (the hreader binary the integration tests run, and the tests), then runs them
# (XCTest only: the project has no Swift Testing suites), each in a process of its own, the longest
# first (.ci/run-tests.py), and ends with one plain summary line.
test: deps schema
	@python3 .ci/gen-lazy-libraries.py --check
	@python3 .ci/check-json-core.py
	@python3 .ci/check-run-tests.py
	@.ci/pydeps.sh $(BUILD_DIR)/pyenv
	@.ci/browser.sh
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	@rm -f $(BUILD_DIR)/tests.xml
	@set -o pipefail; python3 .ci/run-tests.py --build-dir $(BUILD_DIR) --workers $(TEST_WORKERS) \
		--xunit $(BUILD_DIR)/tests.xml 2>&1 | tee $(BUILD_DIR)/test-output.txt \
		|| { .ci/test-summary.sh $(BUILD_DIR)/tests.xml; exit 1; }
	@.ci/test-summary.sh $(BUILD_DIR)/tests.xml

demo: build
	@.ci/demo.sh $(BUILD_DIR)/debug/hreader

# The end-to-end figures run the hreader that is shipped (.ci/release-build.sh, in its own build directory
# so the bench's products keep the shared runtime).
bench: release
	@.ci/pydeps.sh $(BUILD_DIR)/pyenv
	@SWIFT="$(SWIFT)" BUILD_DIR="$(BUILD_DIR)/shipped" SWIFTFLAGS="$(SWIFTFLAGS)" .ci/release-build.sh >/dev/null
	HREADER_BENCH_HREADER=$(BUILD_DIR)/shipped/release/hreader $(BUILD_DIR)/release/hreader-bench

# Fuzzing (docs/security.md, "Fuzzing"): builds the libFuzzer harnesses (Fuzz/) with -sanitize=fuzzer,address
# in .build/fuzz and runs each for FUZZ_SECONDS; FUZZ_HARNESSES picks some (e.g. "json fhir-xml").
# fuzz-smoke: the same, FUZZ_SMOKE_SECONDS each (for CI: 28 harnesses at 5 s, 2.5 minutes of its run),
# built unoptimised (FUZZ_SMOKE_CONFIG=debug: the same instrumentation, a much shorter build).
# Neither is part of make test.
FUZZ_SECONDS   ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_SMOKE_CONFIG ?= debug
FUZZ_HARNESSES ?=
fuzz: deps schema
	@Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-smoke: deps schema
	@FUZZ_CONFIG=$(FUZZ_SMOKE_CONFIG) Fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_HARNESSES)

# Crash-point torture: SIGKILL at TORTURE_POINTS points spread over each of an import from a server, an Apple
# Health import, a sync, passwd, key add, backup and restore --replace; every vault must open, pass check and
# converge (make test runs 2 each).
TORTURE_POINTS ?= 100
torture: deps schema
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	@set -o pipefail; HREADER_TORTURE_POINTS=$(TORTURE_POINTS) $(SWIFT) test --skip-build --disable-swift-testing --filter CrashTortureTests $(SWIFTFLAGS) 2>&1 \
		| grep -E '^torture |error|Executed'

# The manual page, from the command definitions (swift-argument-parser's generate-manual plugin).
# From the debug build: the same command definitions, without the release build the plugin would make.
man: build
	$(SWIFT) build --product generate-manual $(SWIFTFLAGS)
	$(BUILD_DIR)/debug/generate-manual $(BUILD_DIR)/debug/hreader --output-directory docs

install: release-hreader
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD_DIR)/release/hreader $(DESTDIR)$(PREFIX)/bin/hreader
	install -m 0644 docs/hreader.1 $(DESTDIR)$(PREFIX)/share/man/man1/hreader.1

clean:
	$(SWIFT) package clean
