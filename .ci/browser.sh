#!/usr/bin/env bash
# Installs the headless browser the web UI tests drive: Debian's chromium and its chromedriver
# (spoken to over the W3C WebDriver protocol by Tests/TestSupport/WebDriver.swift), plus a font so
# screenshots show readable text. Idempotent and quiet when everything is already there.
# Needs root on Debian/Ubuntu; elsewhere it only says what is missing.
set -euo pipefail

have_fonts() {
  # Without any font, text renders as empty boxes in screenshots (it is still in the DOM).
  [ "$(uname -s)" = Darwin ] || [ -n "$(find /usr/share/fonts /usr/local/share/fonts -type f \( -name '*.ttf' -o -name '*.otf' \) -print -quit 2>/dev/null)" ]
}

all_present() {
  { command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; } \
    && { command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ]; } \
    && have_fonts
}

if all_present; then
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "browser: chromium, chromedriver or a font is missing; run 'sudo .ci/browser.sh' (Debian: apt-get install chromium chromium-driver fonts-dejavu-core)" >&2
  exit 1
fi

# Two test runs may start at once: one apt-get at a time, and the second finds it done.
exec 9>/tmp/hreader-browser.lock
if command -v flock >/dev/null 2>&1; then flock 9; fi
if all_present; then exit 0; fi

export DEBIAN_FRONTEND=noninteractive
echo "browser: installing chromium, chromium-driver (apt-get)" >&2
apt-get update -qq
# The two come from the same source package, so their versions always match.
apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null

if ! all_present; then
  echo "browser: chromium or chromedriver still missing after apt-get" >&2
  exit 1
fi
echo "browser: $(chromium --version 2>/dev/null || echo chromium) and $(chromedriver --version 2>/dev/null | cut -d' ' -f1-2) ready" >&2
