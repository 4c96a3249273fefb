#!/usr/bin/env python3
"""check-json-core.py: every JSON in and out of hreader goes through HReaderJSON (issue 36).

Fails when Foundation's JSON types (JSONSerialization, JSONEncoder, JSONDecoder) or `[String: Any]`
shapes appear in the code under Sources/, outside the one adapter (HReaderJSON's
JSONValue+Foundation.swift) and the benchmark that measures Foundation as its baseline. Comments may
name them. `make test` runs it, like gen-lazy-libraries.py --check."""
import pathlib
import re
import sys

ALLOWED = {
    "Sources/HReaderJSON/JSONValue+Foundation.swift",   # the adapter: Foundation's objects in
    "Sources/hreader-bench/JSONBench.swift",            # JSONSerialization and JSONDecoder as the baseline
}
FORBIDDEN = re.compile(r"\bJSONSerialization\b|\bJSONEncoder\b|\bJSONDecoder\b|\[\s*String\s*:\s*Any\s*\]")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')

root = pathlib.Path(__file__).resolve().parent.parent
found = []
for path in sorted((root / "Sources").rglob("*.swift")):
    name = path.relative_to(root).as_posix()
    if name in ALLOWED:
        continue
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = STRING.sub('""', line).split("//", 1)[0]   # string literals and comments may name them
        if FORBIDDEN.search(code):
            found.append(f"{name}:{number}: {line.strip()}")
if found:
    print("check-json-core: Foundation's JSON outside HReaderJSON (parse with JSONParser, build JSONValues):", file=sys.stderr)
    for line in found:
        print("  " + line, file=sys.stderr)
    sys.exit(1)
