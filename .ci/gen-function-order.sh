#!/usr/bin/env bash
# .ci/gen-function-order.sh [HREADER]: writes .ci/hreader.order, the functions the commands people and
# scripts run most enter, in the order they first enter them; .ci/release-build.sh hands it to the
# linker (--symbol-ordering-file) so that code sits together at the front of .text.
#
# Why: a short command's start is mostly page faults (docs/cli.md, "Start-up"). Laid out as compiled,
# the 1,100 functions a timeline page runs are spread over 510 pages of a 28 MB .text, and each first
# touch is a fault that maps 16 pages around it; together they take a few hundred kB.
#
# HREADER is a release build with its symbols (default: .ci/release-build.sh's, in .build/shipped,
# the bench's). The traced commands run on a throw-away vault with generated data. Run it again
# (`make function-order`) when the start-up path changes; an order file that names functions that are
# gone is harmless (the linker skips them) but lays out less.
# Needs ptrace (Linux), cc, readelf and python3.
set -euo pipefail
hreader=${1:+$(readlink -f "$1")}   # before the cd: a path relative to where it was run
cd "$(dirname "$0")/.."
repo=$PWD
if [ -z "$hreader" ]; then
  hreader=$(BUILD_DIR=.build/shipped .ci/release-build.sh)
fi
hreader=$(readlink -f "$hreader")
generator=$(dirname "$hreader")/hreader-health-generator
work=$(mktemp -d "${TMPDIR:-/tmp}/hreader-order.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 077

cc -O2 -o "$work/trace-entries" .ci/function-order/trace-entries.c
# Every function's entry, as an offset from the load address (the binary is position-independent).
readelf -sW "$hreader" | awk '$4 == "FUNC" && $3 + 0 > 0 && $7 != "UND" { print $2 }' \
  | python3 -c 'import sys; print("".join("%x\n" % a for a in sorted({int(l, 16) for l in sys.stdin})), end="")' > "$work/entries"

# A vault with what a person's has: clinical records (a FHIR bundle) and a watch's samples.
export HREADER_VAULT="$work/vault"
unset HREADER_SESSION HREADER_PASSWORD
printf 'Order-Passw0rd\n' > "$work/password"
"$hreader" init --new-password-file "$work/password" --scrypt-n 1024 > /dev/null 2> "$work/init.err" \
  || { cat "$work/init.err" >&2; exit 1; }
eval "$("$hreader" unlock --password-file "$work/password" --for 10m)"
"$hreader" import --file docs/examples/fhir-bundle.json --as me > /dev/null
if [ ! -x "$generator" ]; then
  generator=$repo/.build/release/hreader-health-generator
  [ -x "$generator" ] || swift build -c release --product hreader-health-generator >&2
fi
"$generator" --out "$work/export.zip" --records 20000 --days 30 > /dev/null
"$hreader" import --apple-health "$work/export.zip" --as me > /dev/null
# The watch's wearer, and the day of their last entry.
patient=$("$hreader" patients list --json | python3 -c '
import json, sys
print(next(p["id"] for p in json.load(sys.stdin)["patients"] if "Apple Health" in p["last_name"]))')
day=$("$hreader" entries list --patient "$patient" --json | python3 -c '
import json, sys
print(max(e.get("date") or e.get("start") or "" for e in json.load(sys.stdin)["entries"])[:10] + "T12:00:00Z")')

# The commands, most called first: what they share (start-up) comes first because the first traced
# enters it first.
n=0
trace() {
  n=$((n + 1))
  "$work/trace-entries" "$work/entries" "$work/trace.$n" "$hreader" "$@" > /dev/null
}
trace --version
trace timeline --patient "$patient" --page day --at "$day"
trace timeline --patient "$patient" --page month --at "$day" --detail
trace search asthma
trace status
trace entries list --patient "$patient"
trace patients list
trace timeline --patient "$patient" --page year --at "$day" --pretty

python3 - "$hreader" "$work" "$n" > .ci/hreader.order <<'PYTHON'
import subprocess, sys
binary, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = {}
for line in subprocess.run(["readelf", "-sW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) >= 8 and fields[3] == "FUNC" and fields[6] != "UND" and int(fields[2]) > 0:
        names.setdefault(int(fields[1], 16), fields[7])
seen = set()
for run in range(1, runs + 1):
    for line in open(f"{work}/trace.{run}"):
        address = int(line, 16)
        if address not in seen and address in names:
            seen.add(address)
            print(names[address])
PYTHON
chmod 644 .ci/hreader.order
echo "gen-function-order: $(wc -l < .ci/hreader.order) functions in .ci/hreader.order" >&2
