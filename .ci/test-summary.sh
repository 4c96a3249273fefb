#!/usr/bin/env bash
# The suite's tally from the xUnit file `swift test --parallel` writes: "tests: N passed, F failed",
# and each failed test by name. Fails when the file is missing (the suite did not run to its end).
set -euo pipefail
xml="${1:?usage: test-summary.sh tests.xml}"
[ -s "$xml" ] || { echo "tests: no results ($xml is missing)"; exit 1; }
python3 - "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
failed = []
total = 0
for case in cases:
    total += 1
    if case.find("failure") is not None or case.find("error") is not None:
        failed.append(f"{case.get('classname')}.{case.get('name')}")
for name in failed:
    print(f"  failed: {name}")
print(f"tests: {total - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
