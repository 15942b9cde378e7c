"""Every test of the unity-built hamgan_tests is run by exactly one file's CTest test.

  tests_partition_check.py HAMGAN_TESTS SUITE...

tests/CMakeLists.txt gives each test file's CTest test a --gtest_filter of the suites it found in
that file (SUITE... is all of them). A suite the executable holds but the configure did not find
(a TEST written in a way its pattern misses) would run under no CTest test and pass silently; a
suite found but not in the executable means the pattern matched something that is not a test.
Exits non-zero naming them."""
import re
import subprocess
import sys

binary, expected = sys.argv[1], set(sys.argv[2:])
listing = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True, text=True).stdout
# Suite lines start at column 0 and end with '.', optionally followed by "  # TypeParam = ...";
# parameterised suites read Prefix/Suite. gtest_main prints its banner ("Running main() from ...") first.
listed = set()
tests = 0
for line in listing.splitlines():
    if not line.strip() or line.startswith("Running main() from "):
        continue
    if line.startswith(" "):
        tests += 1
        continue
    m = re.fullmatch(r"(\S+)\.(\s+#.*)?", line)
    if not m:
        sys.exit(f"tests_partition: FAILED: a line of --gtest_list_tests that is neither a suite nor a test: {line!r}")
    listed.add(m.group(1).split("/")[-1])
unrun = sorted(listed - expected)
phantom = sorted(expected - listed)
if unrun:
    print("tests_partition: FAILED: suites in hamgan_tests that no CTest test runs:", ", ".join(unrun))
if phantom:
    print("tests_partition: FAILED: suites found in the test files but not in hamgan_tests:", ", ".join(phantom))
if unrun or phantom or not listed:
    sys.exit(1)
print(f"tests_partition: {len(listed)} suites, {tests} tests, each suite run by one file's CTest test")
