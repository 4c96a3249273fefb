#!/usr/bin/env bash
# Creates a Python virtual environment at DIR (default .build/pyenv) holding fhir.resources, the
# independent FHIR validator the export tests run the exported resources through, and
# healthkit-to-sqlite, the reference Apple Health importer `make bench` compares against, and fitdecode,
# the FIT decoder its wearables group times on the same files.
# Idempotent and fast when already done: a stamp file records what was installed.
#   .ci/pydeps.sh .build/pyenv
set -euo pipefail

dir="${1:-.build/pyenv}"
# Pinned: 8.x ships R4B models (fhir.resources.R4B), the closest to FHIR R4 4.0.1.
requirement="fhir.resources==8.3.0 healthkit-to-sqlite==1.0.1 fitdecode==0.11.0"
stamp="$dir/.hreader-pydeps"

if [ -x "$dir/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$requirement" ] \
   && "$dir/bin/python3" -c 'import fhir.resources.R4B.bundle' >/dev/null 2>&1; then
  exit 0
fi

python="${PYTHON:-$(command -v python3 || true)}"
if [ -z "$python" ]; then
  echo "pydeps: python3 is missing (Debian: apt-get install python3 python3-venv)" >&2
  exit 1
fi
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
  else
    echo "pydeps: the Python venv module is missing (Debian: apt-get install python3-venv)" >&2
    exit 1
  fi
fi

mkdir -p "$dir"
# Another process may be building the same environment: one at a time.
exec 9>"$dir/.hreader-pydeps.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -x "$dir/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$requirement" ]; then exit 0; fi

"$python" -m venv "$dir"
# shellcheck disable=SC2086  # the requirements are separate words
"$dir/bin/python3" -m pip install -q --disable-pip-version-check $requirement
"$dir/bin/python3" -c 'import fhir.resources.R4B.bundle, fhir.resources.R4B.observation, fhir.resources.R4B.patient'
printf '%s\n' "$requirement" > "$stamp"
