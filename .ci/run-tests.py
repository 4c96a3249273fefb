#!/usr/bin/env python3
"""make test's runner: every XCTest of the package in a process of its own, WORKERS at a time, the
longest first.

`swift test --parallel` hands tests to its workers in the order it lists them, so the minute-long ones
(the watch-scale views, the headless browser, the crash tortures) start wherever the list puts them and
the run can end on a tail of one or two while the other workers idle. Here each test's duration from the
last run (BUILD_DIR/test-durations.tsv, else the committed .ci/test-durations.tsv; a test in neither
counts as a short one) orders the queue longest first. On 2026-12-02, two cores, 819 tests: 590 s with
`swift test --parallel --num-workers 3`, 465-494 s with this at three workers (407 s after two tests
stopped doing most of their work themselves); the suite is bound by the processor (about 750 processor
seconds), so more workers do not help. .ci/check-run-tests.py, which make test runs first, checks it.

Writes the same xUnit file as `swift test --xunit-output` (.ci/test-summary.sh reads it), prints a line
per test as it ends and the whole output of each failed one, runs a failed test once more alone and names
it when it then passes, and writes this run's durations (wall and processor seconds) for the next.
Exit status: 0 when every test passed.

  run-tests.py --build-dir .build --workers 3 --xunit .build/tests.xml [FILTER…]
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from xml.sax.saxutils import escape, quoteattr

COMMITTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-durations.tsv")


def read_durations(path):
    durations = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, _, rest = line.rstrip("\n").partition("\t")
                seconds = rest.split("\t")[0]
                try:
                    durations[name] = float(seconds)
                except ValueError:
                    pass
    except OSError:
        pass
    return durations


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=".build")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--xunit", required=True)
    parser.add_argument("--timeout", type=float, default=900, help="seconds a test may take")
    parser.add_argument("--again", type=int, default=1, choices=(0, 1),
                        help="run a failed test once more alone (1, the default) or not (0)")
    parser.add_argument("filters", nargs="*", help="only tests whose name contains one of these")
    args = parser.parse_args()

    binary = os.path.join(args.build_dir, "debug", "hreaderPackageTests.xctest")
    if not os.access(binary, os.X_OK):
        print(f"tests: no test binary at {binary} (swift build --build-tests)", file=sys.stderr)
        return 1
    listed = subprocess.run([binary, "--list-tests"], capture_output=True, text=True)
    # Lines "Module.Class/test"; XCTest may print a header line before them.
    tests = [line.strip() for line in listed.stdout.splitlines() if "/" in line and "." in line.split("/")[0]]
    if listed.returncode != 0 or not tests:
        print(f"tests: listing the tests failed: {listed.stderr.strip()[:500]}", file=sys.stderr)
        return 1
    if args.filters:
        tests = [t for t in tests if any(f in t for f in args.filters)]

    measured = os.path.join(args.build_dir, "test-durations.tsv")
    durations = read_durations(COMMITTED)
    durations.update(read_durations(measured))
    queue = sorted(tests, key=lambda t: (-durations.get(t, 0.5), t))

    lock = threading.Lock()
    results = {}
    processor = {}
    done = [0]
    started = time.monotonic()

    def run_one(test):
        """One test in a process of its own: (passed, seconds, processor seconds, output)."""
        began = time.monotonic()
        # Output to a file, not a pipe: a server a test left running would hold a pipe open. Each
        # test leads a process group of its own, so what it leaves behind is ended with it, and so
        # is a test past the time limit.
        with tempfile.TemporaryFile() as log:
            child = subprocess.Popen([binary, test], stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
            timer = threading.Timer(args.timeout, os.killpg, (child.pid, signal.SIGKILL))
            timer.start()
            # wait4: the test's processor time, with that of the processes it started and waited for.
            _, status, usage = os.wait4(child.pid, 0)
            timer.cancel()
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            log.seek(0)
            output = log.read().decode("utf-8", "replace")
        seconds = time.monotonic() - began
        if seconds >= args.timeout:
            output += f"\n(ended after {args.timeout:.0f} s: --timeout)\n"
        # A test passes when its process ends well and XCTest says it ran it: a crash is a failure, and
        # so is a name that ran nothing.
        passed = os.waitstatus_to_exitcode(status) == 0 and "Executed 1 test" in output
        return passed, seconds, usage.ru_utime + usage.ru_stime, output

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                test = queue.pop(0)
            passed, seconds, cpu, output = run_one(test)
            with lock:
                results[test] = (passed, seconds, output)
                processor[test] = cpu
                done[0] += 1
                print(f"[{done[0]}/{len(tests)}] {test} {'passed' if passed else 'FAILED'} ({seconds:.1f} s)", flush=True)
                if not passed:
                    print(output, flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # A test that failed while the others ran beside it runs once more alone: one that then passes
    # depends on timing under load (the machine is two cores); it is named as such, not hidden, and
    # counts as passed. One that fails again has failed.
    unsteady = []
    for test in sorted(t for t, (passed, _, _) in results.items() if not passed and args.again):
        passed, seconds, cpu, output = run_one(test)
        print(f"[again] {test} {'passed' if passed else 'FAILED'} alone ({seconds:.1f} s)", flush=True)
        if passed:
            unsteady.append(test)
            results[test] = (True, results[test][1], results[test][2])
        elif output:
            print(output, flush=True)
    wall = time.monotonic() - started

    with open(args.xunit, "w", encoding="utf-8") as xml:
        failures = sum(1 for passed, _, _ in results.values() if not passed)
        xml.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        xml.write(f'<testsuites>\n<testsuite name="TestResults" errors="0" tests="{len(results)}" '
                  f'failures="{failures}" time="{wall:.3f}">\n')
        for test in tests:
            passed, seconds, output = results[test]
            classname, _, name = test.partition("/")
            xml.write(f"<testcase classname={quoteattr(classname)} name={quoteattr(name)} time=\"{seconds:.3f}\">\n")
            if not passed:
                xml.write(f"<failure message=\"failed\">{escape(output[-4000:])}</failure>\n")
            xml.write("</testcase>\n")
        xml.write("</testsuite>\n</testsuites>\n")
    # Durations for the next run's order (only when the whole suite ran, so a filtered run keeps them).
    if not args.filters:
        with open(measured, "w", encoding="utf-8") as f:
            for test in sorted(results):
                f.write(f"{test}\t{results[test][1]:.1f}\t{processor[test]:.1f}\n")
    print(f"tests: ran {len(results)} in {wall:.0f} s with {args.workers} workers", flush=True)
    for test in unsteady:
        print(f"tests: unsteady: {test} failed beside the others and passed alone (its output is above)", flush=True)
    return 0 if all(passed for passed, _, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
