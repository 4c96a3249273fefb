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
# - --as-needed ahead of the libraries (.ci/ld-as-needed): SQLCipher, libcrypto and libxml2 are loaded on
#   first use (Sources/CDynamicLibrary), not at start.
# Together about two milliseconds off every command (docs/cli.md, "Start-up"). Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BUILD_DIR=${BUILD_DIR:-.build}
flags=()
if [ "$(uname -s)" = Linux ]; then
  lld="$(dirname "$(readlink -f "$(command -v swiftc)")")/ld.lld"
  [ -x "$lld" ] || lld=$(command -v ld.lld) || { echo "release-build: ld.lld (the Swift toolchain's) is needed" >&2; exit 1; }
  export HREADER_LLD=$lld
  flags=(--static-swift-stdlib -Xswiftc -use-ld=lld -Xswiftc "-ld-path=$PWD/.ci/ld-as-needed"
         -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
fi
# shellcheck disable=SC2086 # SWIFTFLAGS is a list of words on purpose
$SWIFT build -c release --product hreader --build-path "$BUILD_DIR" "${flags[@]}" ${SWIFTFLAGS:-} >&2
echo "$BUILD_DIR/release/hreader"
