#!/usr/bin/env bash
# Installs what hreader needs to build and test: SQLCipher >= 4.5, OpenSSL, libxml2, zlib (ZIPFoundation and
# the Apple Health import's CRC check), libqrencode, zbar and netpbm, pkg-config; zbarimg for the tests; and the helpers that read text
# from PDFs, scans and photos (poppler-utils, Tesseract with English and orientation detection, a font for poppler to draw with).
# Idempotent: does nothing when everything is already there. Safe to run as root on Debian/Ubuntu,
# or as a user on macOS with Homebrew.
set -euo pipefail

need_min_sqlcipher="4.5"

have_sqlcipher() {
  pkg-config --exists sqlcipher 2>/dev/null || return 1
  local v; v=$(pkg-config --modversion sqlcipher)
  # pkg-config reports the underlying SQLite version (e.g. 3.46.1 for SQLCipher 4.6.1); SQLCipher 4.5
  # is built on SQLite >= 3.36. SQLCipher 3.4.1 reports 3.15.2.
  [ "$(printf '%s\n%s\n' "3.36.0" "$v" | sort -V | head -n1)" = "3.36.0" ]
}

all_present() {
  command -v pkg-config >/dev/null 2>&1 && have_sqlcipher \
    && pkg-config --exists libcrypto 2>/dev/null && pkg-config --exists libxml-2.0 2>/dev/null \
    && pkg-config --exists zlib 2>/dev/null \
    && pkg-config --exists libqrencode 2>/dev/null && pkg-config --exists zbar 2>/dev/null \
    && command -v zbarimg >/dev/null 2>&1 && command -v pngtopnm >/dev/null 2>&1 \
    && command -v sqlcipher >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1 \
    && have_text_helpers
}

# Papers' text (docs/documents.md, "Text from PDFs, scans and photos"): run as sandboxed child processes.
have_text_helpers() {
  command -v pdftotext >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1 && command -v tesseract >/dev/null 2>&1 \
    && tesseract --list-langs 2>/dev/null | grep -qx eng && tesseract --list-langs 2>/dev/null | grep -qx osd \
    && { [ "$(uname -s)" = Darwin ] || fc-list 2>/dev/null | grep -q .; }
}

if all_present; then
  exit 0
fi

case "$(uname -s)" in
  Darwin)
    brew install sqlcipher openssl@3 libxml2 zlib pkg-config qrencode zbar netpbm poppler tesseract
    exit 0 ;;
esac

if [ "$(id -u)" != 0 ]; then
  echo "deps: missing system packages (SQLCipher >= $need_min_sqlcipher, libssl-dev, libxml2-dev, libqrencode-dev, zbar-tools, pkg-config); run 'sudo make deps'" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
. /etc/os-release
target=()
if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
  # Debian 12's main archive has SQLCipher 3.4.1 (2016); bookworm-backports has 4.6.x.
  list=/etc/apt/sources.list.d/hreader-bookworm-backports.list
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" > "$list"
  fi
  target=(-t bookworm-backports)
fi
echo "deps: installing SQLCipher, OpenSSL, libxml2 headers (apt-get)" >&2
apt-get update -qq
# openssl (the command) makes the test certificates of the TLS tests.
# libqrencode draws share create's QR codes, zbar reads them in pictures (netpbm turns pictures into the
# PNM it reads); zbar-tools' zbarimg reads them back in the tests.
apt-get install -y -qq --no-install-recommends pkg-config libssl-dev libxml2-dev zlib1g-dev openssl libqrencode-dev libzbar-dev netpbm \
  zbar-tools >/dev/null
apt-get install -y -qq --no-install-recommends "${target[@]}" libsqlcipher-dev sqlcipher >/dev/null
echo "deps: installing poppler-utils and tesseract-ocr (apt-get)" >&2
apt-get install -y -qq --no-install-recommends poppler-utils tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd fonts-dejavu-core >/dev/null

if ! have_sqlcipher; then
  echo "deps: SQLCipher $(pkg-config --modversion sqlcipher 2>/dev/null || echo none) is older than $need_min_sqlcipher" >&2
  exit 1
fi
echo "deps: SQLCipher (SQLite $(pkg-config --modversion sqlcipher)) ready" >&2
