#!/usr/bin/env python3
"""python/'s requirements keep the torch the project installs: on a venv over Debian's Python
with its python3-torch (--system-site-packages, as scripts/setup.sh makes the ecosystem venv),
`pip install ./python` and `pip install './python[onnx]'` resolve with nothing from an index
(--no-index): pip reports hamgan-py as the only package to install. Debian's torch is
1.13.0a0, which pip orders below 1.13: under a requirement `torch>=1.13` pip would fetch torch
2.x and its CUDA wheels instead.

Usage: python_package_check.py SOURCE_DIR SCRATCH_DIR (run by the venv's python).
"""
import json
import os
import shutil
import subprocess
import sys


def main():
    src, scratch = sys.argv[1:3]
    try:
        import torch
    except ImportError:
        sys.exit(f"python_package_check: {sys.executable} has no torch: expected the ecosystem venv over Debian's "
                 "python3-torch (scripts/setup.sh makes it)")
    print(f"python_package_check: {sys.executable}, torch {torch.__version__}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    # A copy: pip's metadata build writes next to the sources.
    pkg = os.path.join(scratch, "python")
    shutil.copytree(os.path.join(src, "python"), pkg)
    failures = []
    for extra in ("", "[onnx]"):
        report = os.path.join(scratch, f"report{extra}.json")
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation",
               "--disable-pip-version-check", "--quiet", "--report", report, pkg + extra]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"pip install ./python{extra} does not resolve without an index over torch "
                            f"{torch.__version__}:\n{r.stdout}{r.stderr}")
            continue
        with open(report) as f:
            names = sorted(i["metadata"]["name"] for i in json.load(f)["install"])
        print(f"  ./python{extra}: would install {names}")
        if names != ["hamgan-py"]:
            failures.append(f"pip install ./python{extra} would install {names}, expected only hamgan-py "
                            f"(the installed torch {torch.__version__} must satisfy python/pyproject.toml)")
    if failures:
        print("python_package_check: FAILED\n" + "\n".join(failures))
        return 1
    print("python_package_check: the installed torch satisfies python/ and its [onnx] extra")
    return 0


if __name__ == "__main__":
    sys.exit(main())
