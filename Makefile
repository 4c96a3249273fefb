# hreader's front door. `make demo` and `make test` install what they need (.ci/deps.sh).
SWIFT      ?= swift
PREFIX     ?= /usr/local
BUILD_DIR  ?= .build
SWIFTFLAGS ?=
SHELL      := /bin/bash

.PHONY: all deps schema build release test demo bench install clean

all: build

deps:
	@.ci/deps.sh

schema:
	@.ci/embed-schema.sh

build: deps schema
	$(SWIFT) build $(SWIFTFLAGS)

release: deps schema
	$(SWIFT) build -c release $(SWIFTFLAGS)

# Builds everything (the hreader binary the integration tests run, and the tests), then runs them
# (XCTest only: the project has no Swift Testing suites) and ends with one plain summary line.
test: deps schema
	@.ci/pydeps.sh $(BUILD_DIR)/pyenv
	@.ci/browser.sh
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	@set -o pipefail; $(SWIFT) test --skip-build --disable-swift-testing $(SWIFTFLAGS) 2>&1 | tee $(BUILD_DIR)/test-output.txt
	@awk '/^Test Suite .All tests. (passed|failed)/ { getline; n=$$2; f=$$5 } END { if (n == "") exit 1; printf "tests: %d passed, %d failed\n", n - f, f }' $(BUILD_DIR)/test-output.txt

demo: build
	@.ci/demo.sh $(BUILD_DIR)/debug/hreader

bench: release
	@.ci/pydeps.sh $(BUILD_DIR)/pyenv
	$(BUILD_DIR)/release/hreader-bench

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD_DIR)/release/hreader $(DESTDIR)$(PREFIX)/bin/hreader

clean:
	$(SWIFT) package clean
