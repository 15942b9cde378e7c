#!/usr/bin/env python3
"""Fails when a source file includes a header from a higher layer (or a sibling layer).

Layers, bottom to top; a file may include its own layer and any lower one (not a sibling):
  core -> io -> plot -> layers -> metrics -> gan/config -> gan/models -> gan/data -> gan/checkpoint
  -> gan/sample -> gan/train, gan/classifier -> gan/eval, gan/bench -> gan/cli
A file's layer is the folder it is in (nothing else: no per-file exceptions). Run by CTest as
check_layers; `check_layers.py [ROOT]`.
"""
import pathlib
import re
import sys

# One list per rank; each layer: (name, folders). A folder's subfolders belong to it unless listed.
LAYERS = [[("core", ["core/"])], [("io", ["io/"])], [("plot", ["plot/"])], [("layers", ["layers/"])], [("metrics", ["metrics/"])],
          [("gan/config", ["gan/config/"])], [("gan/models", ["gan/models/"])], [("gan/data", ["gan/data/"])],
          [("gan/checkpoint", ["gan/checkpoint/"])], [("gan/sample", ["gan/sample/"])],
          [("gan/train", ["gan/train/"]), ("gan/classifier", ["gan/classifier/"])],
          [("gan/eval", ["gan/eval/"]), ("gan/bench", ["gan/bench/"])], [("gan/cli", ["gan/cli/"])]]
DIRS = ["core", "io", "plot", "layers", "metrics", "gan"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """(rank, name) of the layer of the folder that holds `path` (relative, '/'-separated), or None."""
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    for rank, layers in enumerate(LAYERS):
        for name, folders in layers:
            assert all(f.endswith("/") for f in folders), name  # folders only, never single files
            if any(folder.startswith(f) for f in folders):
                return rank, name
    return None


def upward_includes(root):
    """(messages, number of files checked) for the tree at `root`."""
    bad, checked = [], 0
    files = sorted(f for d in DIRS for f in (root / d).glob("**/*") if f.suffix in (".h", ".cpp"))
    for f in files:
        rel = f.relative_to(root).as_posix()
        own = layer_of(rel)
        if own is None:
            bad.append(f"{rel}: in no layer (add its folder to scripts/check_layers.py)")
            continue
        checked += 1
        for inc in INCLUDE.findall(f.read_text(errors="replace")):
            dep = layer_of(inc)
            if dep is None:
                bad.append(f"{rel}: includes \"{inc}\", which is in no layer")
            elif dep[0] > own[0] or (dep[0] == own[0] and dep[1] != own[1]):
                bad.append(f"{rel} ({own[1]}) includes \"{inc}\" ({dep[1]}): includes only run downward")
    return bad, checked


def self_test():
    """The check must flag an upward, a sibling and an unknown include and a file in no layer's folder,
    and pass a downward one."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        tree = {"metrics/a.cpp": '#include "gan/train/trainer.h"\n#include "io/png.h"\n',
                "gan/train/b.h": '#include "gan/classifier/train_classifier.h"\n',
                "gan/eval/c.cpp": '#include "gan/train/b.h"\n#include "tests/x.h"\n',
                "gan/d.h": ""}
        for rel, text in tree.items():
            (pathlib.Path(d) / rel).parent.mkdir(parents=True, exist_ok=True)
            (pathlib.Path(d) / rel).write_text(text)
        bad, checked = upward_includes(pathlib.Path(d))
    want = ["gan/d.h: in no layer", "gan/eval/c.cpp: includes \"tests/x.h\"", "gan/train/b.h (gan/train) includes \"gan/classifier/train_classifier.h\"",
            "metrics/a.cpp (metrics) includes \"gan/train/trainer.h\""]
    if checked != 3 or len(bad) != 4 or any(not b.startswith(w) for b, w in zip(bad, want)):
        print("self-test failed:", checked, bad)
        return False
    return True


def main():
    if not self_test():
        return 1
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    bad, checked = upward_includes(root)
    for b in bad:
        print(b)
    if checked == 0:
        print(f"{root}: no source files found")
        return 1
    print(f"{checked} files checked, {len(bad)} upward includes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
