#!/usr/bin/env python3
"""Fails when code a training step can reach reads a tensor on the host without saying why.

On a GPU, item(), .cpu() and .to(kCPU) wait for every kernel queued before them (the
step must never wait for the device). In core/, layers/, gan/models/ and gan/train/ each such
line needs a comment containing "host read:" on it or on one of the 4 lines above, saying
why it is not in the step (report points, checkpoints) or why it is rare. The reads LibTorch
makes inside its own operators are counted at run time by tests/test_host_reads.cpp.
Run by CTest as check_host_reads; `check_host_reads.py [ROOT]`.
"""
import pathlib
import re
import sys

DIRS = ["core", "layers", "gan/models", "gan/train"]
READ = re.compile(r"\.item\s*(<[^>]*>)?\s*\(|\.cpu\s*\(\)|\.to\s*\(\s*(torch::|at::|c10::)?(kCPU|Device\((torch::|at::)?kCPU\))")
WINDOW = 4


def unjustified(root):
    bad = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".cu"):
                continue
            lines = path.read_text(errors="replace").splitlines()
            for i, line in enumerate(lines):
                code = line.split("//", 1)[0]
                if not READ.search(code):
                    continue
                if not any("host read:" in l for l in lines[max(0, i - WINDOW):i + 1]):
                    bad.append(f"{path.relative_to(root)}:{i + 1}: {line.strip()}")
    return bad


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    bad = unjustified(root)
    for b in bad:
        print(f"{b}\n  a host read (waits for the device) without a 'host read:' comment saying why")
    print(f"check_host_reads: {len(bad)} unjustified host reads in {', '.join(DIRS)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
