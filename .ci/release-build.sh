#!/usr/bin/env bash
# The self-contained hreader binary that `make install` and `make deb` ship, built into BUILD_DIR
# (default .build; the bench uses its own, so its other products keep the shared runtime).
# On Linux:
# - --static-swift-stdlib: the Swift runtime, Foundation and its ICU data are inside the binary, so it
#   runs without the toolchain;
# - lld with packed relative relocations (DT_RELR, glibc >= 2.36): the binary's 130,000 relative
#   relocations are a 25 kB bitmap instead of a 3 MB table the loader walks at every start;
# - --no-export-dynamic: no dynamic symbol table of 37,000 Swift symbols, which every symbol lookup of
#   the shared libraries and the runtime's dladdr at start-up would search.
# - no run path (--disable-local-rpath: SwiftPM gives executables $ORIGIN): the libraries loaded on first
#   use are opened by soname, and a run path of the binary's own directory would load a libsqlcipher.so.1
#   planted beside a binary run from ~/Downloads into the process that holds the data key (deb-test fails
#   on any RUNPATH or RPATH);
# - --as-needed ahead of the libraries (.ci/ld-shipped): SQLCipher, libcrypto and libxml2 are loaded on
#   first use (Sources/CDynamicLibrary), not at start;
# - libstdc++ linked from its archive (.ci/ld-shipped), when the GCC installation has one: one shared
#   library fewer to load and bind at every start;
# - the functions short commands run laid out together at the front of .text, in the order of
#   .ci/hreader.order (written by .ci/gen-function-order.sh): fewer page faults at start.
# Together a few milliseconds off every command (docs/cli.md, "Start-up"). Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BUILD_DIR=${BUILD_DIR:-.build}
flags=()
if [ "$(uname -s)" = Linux ]; then
  lld="$(dirname "$(readlink -f "$(command -v swiftc)")")/ld.lld"
  [ -x "$lld" ] || lld=$(command -v ld.lld) || { echo "release-build: ld.lld (the Swift toolchain's) is needed" >&2; exit 1; }
  export HREADER_LLD=$lld
  archive=$("$(dirname "$lld")/clang" -print-file-name=libstdc++.a 2>/dev/null || true)
  if [ -f "$archive" ]; then
    export HREADER_STATIC_LIBSTDCXX=$archive
  else
    echo "release-build: no libstdc++.a (Debian: libstdc++-12-dev); libstdc++ stays a shared library" >&2
  fi
  flags=(--static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld -Xswiftc "-ld-path=$PWD/.ci/ld-shipped"
         -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
         -Xlinker "--symbol-ordering-file=$PWD/.ci/hreader.order" -Xlinker --no-warn-symbol-ordering)
  # Inputs of the link that SwiftPM does not track: a newer order file, linker wrapper or this script relinks.
  binary="$BUILD_DIR/release/hreader"
  if [ -e "$binary" ] && { [ .ci/hreader.order -nt "$binary" ] || [ .ci/ld-shipped -nt "$binary" ] || [ .ci/release-build.sh -nt "$binary" ]; }; then
    rm -f "$binary"
  fi
fi
# shellcheck disable=SC2086 # SWIFTFLAGS is a list of words on purpose
$SWIFT build -c release --product hreader --build-path "$BUILD_DIR" "${flags[@]}" ${SWIFTFLAGS:-} >&2
echo "$BUILD_DIR/release/hreader"
