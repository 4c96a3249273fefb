# hreader's front door. `make demo` and `make test` install what they need (.ci/deps.sh).
SWIFT      ?= swift
PREFIX     ?= /usr/local
BUILD_DIR  ?= .build
SWIFTFLAGS ?=

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

# Builds everything (the hreader binary the integration tests run, and the tests), then runs them.
test: deps schema
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build $(SWIFTFLAGS)

demo: build
	@.ci/demo.sh $(BUILD_DIR)/debug/hreader

bench: release
	$(BUILD_DIR)/release/hreader-bench

install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD_DIR)/release/hreader $(DESTDIR)$(PREFIX)/bin/hreader

clean:
	$(SWIFT) package clean
