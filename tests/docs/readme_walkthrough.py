#!/usr/bin/env python3
"""The user guide's ImageNet-style walkthrough (docs/user-guide.md), run as written on a small
folder made here: 3 synset directories of JPEGs of 90-300 px, some grayscale, one CMYK, one PNG
named .JPEG. The block after `<!-- walkthrough: imagenet-folder -->` runs in bash with its variable
lines (NAME=value at the top) set to this folder, a temporary run directory and small counts,
and `build/hamgan` replaced by the binary under test. Then: the run's and the samples'
classes.txt name the synsets, the grid, the classifier and scores.csv exist.

Usage: readme_walkthrough.py SOURCE_DIR HAMGAN_BINARY WORK_DIR
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

MARK = "<!-- walkthrough: imagenet-folder -->"
GUIDE = "docs/user-guide.md"  # the page that holds the walkthrough
SYNSETS = ["n01440764", "n01443537", "n01484850"]


def make_folder(root):
    rng = np.random.default_rng(0)
    for c, syn in enumerate(SYNSETS):
        d = root / syn
        d.mkdir(parents=True)
        for k in range(8):
            h, w = (int(v) for v in rng.integers(90, 300, 2))
            base = np.zeros((h, w, 3), np.uint8)
            base[..., c] = 200  # each class its own colour
            px = np.clip(base + rng.integers(0, 50, (h, w, 3)), 0, 255).astype(np.uint8)
            im = Image.fromarray(px)
            name = d / f"{syn}_{k}.JPEG"
            if k == 0:
                im.convert("L").save(name, "JPEG")
            elif k == 1 and c == 1:
                im.convert("CMYK").save(name, "JPEG")
            elif k == 2 and c == 2:
                im.save(name, "PNG")  # a PNG named .JPEG, as ImageNet has
            else:
                im.save(name, "JPEG", quality=90)


def walkthrough(page):
    text = page.read_text()
    at = text.index(MARK)
    block = re.search(r"```bash\n(.*?)```", text[at:], re.S)
    if not block:
        sys.exit(f"readme_walkthrough: no ```bash block after {MARK} in {page}")
    return block.group(1)


def main():
    src, binary, work = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    data, run = work / "train", work / "run"
    make_folder(data)
    values = {"DATA": str(data), "CLASSES": str(len(SYNSETS)), "RUN": str(run), "ITERS": "3", "N": "24",
              "SAMPLES": "12"}
    script, seen = [], set()
    for line in walkthrough(src / GUIDE).splitlines():
        m = re.match(r"^([A-Z_]+)=(\S+)", line)
        if m and m.group(1) in values:
            seen.add(m.group(1))
            line = f"{m.group(1)}={values[m.group(1)]}"
        script.append(line.replace("build/hamgan", binary))
    missing = set(values) - seen
    if missing:
        sys.exit(f"readme_walkthrough: the walkthrough in {GUIDE} does not set {sorted(missing)}")
    script = "set -euo pipefail\n" + "\n".join(script) + "\n"
    print(script, flush=True)
    subprocess.run(["bash", "-c", script], cwd=src, check=True)

    want = "".join(f"{c:03d} {s}\n" for c, s in enumerate(SYNSETS))
    for f in [run / "classes.txt", *run.glob("**/samples_final/classes.txt")]:
        assert f.read_text() == want, (f, f.read_text())
    assert list(run.glob("**/samples_final/classes.txt")), "sample wrote no classes.txt"
    for f in ["grid.png", "clf.pt", "ref.npz", "scores.csv", "config.yaml"]:
        assert (run / f).is_file(), f"{run / f} missing"
    rows = (run / "scores.csv").read_text().splitlines()
    assert len(rows) >= 2, rows
    print(f"readme_walkthrough: passed ({len(rows) - 1} scores.csv rows)")


if __name__ == "__main__":
    main()
