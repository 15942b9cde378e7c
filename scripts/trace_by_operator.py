#!/usr/bin/env python3
"""Device time of a Kineto trace (`hamgan bench train --profile --trace FILE`, or torch.profiler's
Chrome trace) by the chain of operators that launched each kernel: `bench train --profile`'s
table names only the innermost operator (aten::bmm), this one its callers too (aten::matmul >
aten::bmm), which tells which layer a kernel belongs to.

Each kernel is matched to the CPU operators of its launch through their shared "External id";
the innermost (shortest) of them and the operators that enclose it in time on the same thread
form its chain, of which the last --depth are kept.

  trace_by_operator.py TRACE [--steps N] [--depth D] [--kernel TEXT] [--top K] [--show-kernel]
    --steps   the profiled steps in the trace, to print ms per step (bench train's --iters)
    --kernel  only kernels whose name contains TEXT (e.g. 'elementwise_kernel<128, 4')
"""
import argparse
import bisect
import collections
import gzip
import json


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        t = json.load(f)
    return t["traceEvents"] if isinstance(t, dict) else t


def chains(events, depth, kernel_filter, show_kernel):
    """{chain tuple: [total us, launches]} over the matching kernels."""
    ops = [e for e in events if e.get("cat") == "cpu_op" and "dur" in e]
    by_ext = collections.defaultdict(list)
    by_tid = collections.defaultdict(list)
    for e in ops:
        by_ext[e.get("args", {}).get("External id")].append(e)
        by_tid[e["tid"]].append(e)
    starts = {}
    for tid, lst in by_tid.items():
        lst.sort(key=lambda e: e["ts"])
        starts[tid] = [e["ts"] for e in lst]

    def enclosing(op):
        lst, ts = by_tid[op["tid"]], starts[op["tid"]]
        end = op["ts"] + op["dur"]
        outer = [e for e in lst[:bisect.bisect_right(ts, op["ts"])]
                 if e is not op and e["ts"] + e["dur"] >= end]
        return [e["name"] for e in outer]

    memo = {}
    out = collections.defaultdict(lambda: [0.0, 0])
    for k in events:
        if k.get("cat") != "kernel" or (kernel_filter and kernel_filter not in k.get("name", "")):
            continue
        launched = by_ext.get(k.get("args", {}).get("External id"))
        if launched:
            op = min(launched, key=lambda e: e["dur"])
            if id(op) not in memo:
                memo[id(op)] = tuple((enclosing(op) + [op["name"]])[-depth:])
            chain = memo[id(op)]
        else:
            chain = ("(no recorded operator)",)
        if show_kernel:
            chain = chain + (k["name"][:60],)
        out[chain][0] += k.get("dur", 0.0)
        out[chain][1] += 1
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace")
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--kernel", default="")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--show-kernel", action="store_true", help="the kernel's name as the chain's last link")
    a = p.parse_args()
    if a.steps < 1 or a.depth < 1:
        p.error("--steps and --depth: expected >= 1")
    rows = chains(load(a.trace), a.depth, a.kernel, a.show_kernel)
    total = sum(v[0] for v in rows.values())
    print(f"{total / 1000 / a.steps:.3f} ms per step in {sum(v[1] for v in rows.values())} kernels"
          f"{' matching ' + repr(a.kernel) if a.kernel else ''}")
    for chain, (us, n) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:a.top]:
        print(f"{us / 1000 / a.steps:9.3f} ms {n / a.steps:7.1f}x  {' > '.join(chain)}")


if __name__ == "__main__":
    main()
