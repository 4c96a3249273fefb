#!/usr/bin/env bash
# make deb: a Debian package of hreader for people who are not Swift developers. The binary is a
# release build linked with --static-swift-stdlib (the Swift runtime, Foundation and its ICU data
# inside it), so the package depends only on Debian's own libraries, found from the binary's
# NEEDED entries (dpkg -S) rather than written by hand. Writes hreader_VERSION_ARCH.deb in OUT_DIR
# (default: the repository root) and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BUILD_DIR=${BUILD_DIR:-.build}
OUT_DIR=${OUT_DIR:-.}

command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb is needed (Debian or Ubuntu)" >&2; exit 1; }
# objdump and strip (binutils) read and trim the binary; ldconfig lives in /sbin, not always on PATH.
if ! command -v objdump >/dev/null || ! command -v strip >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "deb: objdump and strip are needed ('sudo apt-get install binutils')" >&2; exit 1; }
  apt-get install -y binutils >&2 || { apt-get update >&2 && apt-get install -y binutils >&2; }
fi
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
binary=$(SWIFT="$SWIFT" BUILD_DIR="$BUILD_DIR" .ci/release-build.sh)

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/hreader/CommandLineConventions.swift)
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp makes the staging root 0700, and it is the package's "./": extracted with dpkg-deb -x onto /
# (as container builds do) it would make / itself 0700.
chmod 0755 "$root"
umask 022

install -D -m 0755 "$binary" "$root/usr/bin/hreader"
strip --strip-unneeded "$root/usr/bin/hreader"
install -d "$root/usr/share/man/man1" "$root/usr/share/doc/hreader" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
# Blank lines are not roff (groff warns of each); the page reads the same without them.
sed '/^[[:space:]]*$/d' docs/hreader.1 | gzip -9n > "$root/usr/share/man/man1/hreader.1.gz"
# bash-completion sources the file: no #! line.
"$root/usr/bin/hreader" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/usr/share/bash-completion/completions/hreader"
"$root/usr/bin/hreader" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_hreader"
"$root/usr/bin/hreader" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/hreader.fish"
install -m 0644 README.md "$root/usr/share/doc/hreader/README.md"
# swift-nio-extras (the web view's and the HTTP client's compression) carries its own zlib, its symbols
# prefixed (cnioextras_z_); it is not a copy of the system's that Debian could update in its place.
install -d "$root/usr/share/lintian/overrides"
printf '%s\n' "# swift-nio-extras vendors zlib with prefixed symbols (cnioextras_z_*), linked statically with the Swift packages." \
  "hreader: embedded-library zlib [usr/bin/hreader]" > "$root/usr/share/lintian/overrides/hreader"
chmod 0644 "$root/usr/share/lintian/overrides/hreader"
cat > "$root/usr/share/doc/hreader/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: hreader
Comment: hreader is an encrypted personal health record manager. The binary links the Swift
 runtime and Foundation (Apache-2.0 with Runtime Library Exception), swift-nio, swift-nio-ssl with
 BoringSSL, async-http-client, swift-argument-parser, Hummingbird and ZIPFoundation (Apache-2.0 /
 MIT / ISC / OpenSSL licences) statically, and GCC's libstdc++ (GPL-3 with the GCC Runtime Library
 Exception), which the Swift runtime uses.

Files: *
Copyright: 2026 the hreader authors
License: see the project's repository
COPYRIGHT
printf 'hreader (%s) unstable; urgency=medium\n\n  * Built from the repository.\n\n -- hreader developers <hreader@users.noreply.github.com>  %s\n' \
  "$version" "$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")" \
  | gzip -9n > "$root/usr/share/doc/hreader/changelog.gz"

# Depends: the Debian package of every shared library the binary needs (none of the toolchain's): those it
# links (NEEDED) and those it loads on first use, each the first name its loader tries on Linux (Sources/C*/loader.c;
# the other list there is macOS's dylibs).
loaded=$(for loader in Sources/CSQLCipher/loader.c Sources/COpenSSL/loader.c Sources/CLibXML2/loader.c; do
  grep -o 'names\[\] = { "[^"]*\.so[.0-9]*"' "$loader" | sed 's/.*"\(.*\)"/\1/'
done)
[ "$(wc -w <<<"$loaded")" -eq 3 ] || { echo "deb: cannot read the libraries the loaders open: $loaded" >&2; exit 1; }
depends=()
# Read once: awk leaving a pipe early would kill ldconfig with SIGPIPE, which pipefail reports.
library_cache=$("$ldconfig" -p)
for lib in $(objdump -p "$binary" | awk '/NEEDED/ { print $2 }') $loaded; do
  path=$(awk -v l="$lib" '$1 == l { print $NF; exit }' <<<"$library_cache")
  [ -n "$path" ] || { echo "deb: $lib is not a system library; the binary is not self-contained" >&2; exit 1; }
  package=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1) \
    || package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1) || true
  [ -n "$package" ] || { echo "deb: no Debian package provides $lib ($path)" >&2; exit 1; }
  case "$package" in
    libsqlcipher1) package="libsqlcipher1 (>= 4.5)" ;;
    libc6) package="libc6 (>= 2.36)" ;;   # its loader must apply the binary's packed relocations (DT_RELR)
  esac
  depends+=("$package")
done
# Recommends: what a few commands use and do without otherwise (share create --qr: libqrencode; QR codes
# in pictures: zbar and netpbm; text from PDFs, scans and photos: poppler-utils and Tesseract).
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')
installed_kb=$(du -sk "$root/usr" | cut -f1)

install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: hreader
Version: $version
Architecture: $arch
Maintainer: hreader developers <hreader@users.noreply.github.com>
Installed-Size: $installed_kb
Depends: $depends_line
Recommends: libqrencode4, libzbar0, netpbm, poppler-utils, tesseract-ocr, tesseract-ocr-eng, tesseract-ocr-osd
Section: utils
Priority: optional
Homepage: https://github.com/projecthreader/hReader
Description: encrypted personal health record manager
 Keeps a person's (and their family's) complete health record in one
 SQLCipher-encrypted vault: imports from FHIR R4 and RHEx servers, FHIR files,
 C-CDA documents and Apple Health exports; a timeline, applets, search, a
 clinician summary and a local web view. Scans, photos and PDFs become
 searchable text through poppler-utils and tesseract-ocr (recommended), run
 as sandboxed helpers.
CONTROL

mkdir -p "$OUT_DIR"
deb="$OUT_DIR/hreader_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
