#!/usr/bin/env python3
"""scripts/trace_by_operator.py on a small hand-made Kineto trace: each kernel's time goes to the
chain of operators around the one that launched it (matched by External id, enclosed in time on
the same thread), per step, and a kernel of no recorded operator is counted apart.

  trace_by_operator_check.py SOURCE_DIR WORK_DIR
"""
import gzip
import json
import os
import re
import subprocess
import sys

src, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


def op(name, ts, dur, ext, tid=1):
    return {"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": dur, "tid": tid, "args": {"External id": ext}}


def kernel(name, ext, dur):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": 1000, "dur": dur, "tid": 7, "args": {"External id": ext}}


events = [
    op("aten::matmul", 0, 100, 1), op("aten::bmm", 10, 50, 2),       # bmm inside matmul
    op("aten::bmm", 200, 40, 3),                                      # bmm on its own
    op("aten::conv2d", 300, 100, 4), op("aten::add_", 350, 20, 5),
    op("aten::add_", 360, 5, 5, tid=2),  # same External id, shorter: the launch's innermost op
    kernel("gemm_a", 2, 30.0), kernel("gemm_a", 2, 10.0), kernel("gemm_b", 3, 8.0),
    kernel("add_kernel", 5, 12.0), kernel("orphan", 99, 4.0),
]
path = os.path.join(work, "trace.json.gz")
with gzip.open(path, "wt") as f:
    json.dump({"traceEvents": events}, f)


def run(*args):
    return subprocess.run([sys.executable, os.path.join(src, "scripts/trace_by_operator.py"), path, *args],
                          check=True, capture_output=True, text=True).stdout.splitlines()


failures = []
def expect(cond, what):
    if not cond:
        failures.append(what)


lines = run("--steps", "2", "--depth", "2")
expect(lines[0].startswith("0.032 ms per step in 5 kernels"), f"total line: {lines[0]!r}")
rows = {m.group(3): m.group(1) for m in (re.match(r"^\s*([\d.]+) ms\s+([\d.]+)x  (.*)$", l) for l in lines[1:]) if m}
expect(rows.get("aten::matmul > aten::bmm") == "0.020", f"matmul > bmm: {rows}")  # (30 + 10) us / 2 steps
expect(rows.get("aten::bmm") == "0.004", f"bmm alone: {rows}")
expect(rows.get("aten::add_") == "0.006", f"add_ on thread 2 (innermost): {rows}")
expect(rows.get("(no recorded operator)") == "0.002", f"orphan: {rows}")
only = run("--kernel", "gemm", "--depth", "1", "--show-kernel")
expect(only[0].startswith("0.048 ms per step in 3 kernels matching 'gemm'"), f"filtered total: {only[0]!r}")
expect(any(l.endswith("aten::bmm > gemm_a") for l in only), f"show-kernel: {only}")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("trace_by_operator: ok")
