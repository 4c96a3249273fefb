#!/usr/bin/env python3
"""page-faults.py LIMIT COMMAND...: runs COMMAND three times (output discarded) and fails when its
fewest page faults (minor and major, as getrusage counts them for the child) exceed LIMIT.

The start-up path's layout (.ci/hreader.order, lazy libraries) is guarded by this number, not by
the order file's freshness: a rename on the start path may leave the file stale without harm, a
change that makes a short command touch many more pages fails here."""
import resource
import subprocess
import sys

limit, command = int(sys.argv[1]), sys.argv[2:]
counts = []
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"page-faults: {' '.join(command)} failed: {done.stderr.decode(errors='replace').strip()}")
    counts.append(after.ru_minflt + after.ru_majflt - before.ru_minflt - before.ru_majflt)
fewest = min(counts)
print(f"page-faults: {fewest} for {' '.join(command[1:]) or command[0]} (limit {limit})")
sys.exit(0 if fewest <= limit else 1)
