#!/usr/bin/env python3
"""make test's check of its own runner (.ci/run-tests.py), against a stand-in test binary written here:
a test that passes; one that fails and leaves a process running, which the runner must end; one that
fails only the first time, which the runner must run again alone and name as unsteady; one past the
time limit, which must be ended and fail. The exit status, the xUnit tally and the output are checked.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run-tests.py")

STAND_IN = r"""#!/usr/bin/env bash
here=$(dirname "$0")
if [ "$1" = --list-tests ]; then
  printf 'Listing 4 tests in debug.xctest:\n\nA.B/testPasses\nA.B/testFailsOnce\nA.B/testFailsLeavingAServer\nA.B/testHangs\n'; exit 0
fi
case "$1" in
  A.B/testPasses) echo "Executed 1 test, with 0 failures"; exit 0;;
  A.B/testFailsOnce)
    if [ -f "$here/ran-once" ]; then echo "Executed 1 test, with 0 failures"; exit 0; fi
    touch "$here/ran-once"; echo "Executed 1 test, with 1 failure"; exit 1;;
  A.B/testFailsLeavingAServer)
    sleep 300 & echo $! >> "$here/servers"; echo "Executed 1 test, with 1 failure"; exit 1;;
  A.B/testHangs) sleep 300;;
esac
"""


def main():
    problems = []
    with tempfile.TemporaryDirectory() as build:
        os.makedirs(os.path.join(build, "debug"))
        binary = os.path.join(build, "debug", "hreaderPackageTests.xctest")
        with open(binary, "w") as f:
            f.write(STAND_IN)
        os.chmod(binary, 0o755)
        xunit = os.path.join(build, "tests.xml")
        run = subprocess.run([sys.executable, RUNNER, "--build-dir", build, "--workers", "2", "--timeout", "2",
                              "--xunit", xunit], capture_output=True, text=True, timeout=60)
        out = run.stdout + run.stderr
        if run.returncode != 1:
            problems.append(f"exit status {run.returncode}, not 1")
        cases = {c.get("name"): c.find("failure") is None for c in ET.parse(xunit).getroot().iter("testcase")}
        if cases != {"testPasses": True, "testFailsOnce": True, "testFailsLeavingAServer": False, "testHangs": False}:
            problems.append(f"xUnit results {cases}")
        if "tests: unsteady: A.B/testFailsOnce" not in out:
            problems.append("the test that failed once is not named unsteady")
        if "--timeout" not in out:
            problems.append("the hanging test is not said to be past the time limit")
        with open(os.path.join(build, "debug", "servers")) as f:
            for pid in f.read().split():
                try:
                    os.kill(int(pid), 0)
                    problems.append(f"a process a test left running ({pid}) was not ended")
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
    for problem in problems:
        print(f"check-run-tests: {problem}", file=sys.stderr)
    if problems:
        print(out, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
