"""The small-data benchmark's table (run.sh): per training-set size and set-up, the mean and the
spread (min-max) over the seeds of the last checkpoint's scores against the 10,000 test images
(domain FID, class accuracy, recall, coverage), D's train-minus-held-out gap (`hamgan dgap`) at
the last checkpoint and its largest over the run, and ADA's final p. Also writes
scores_ITERATIONS.csv here, one row per run. A run found in OUT replaces its row there; the rows of
runs not in OUT are kept (runs made on another machine, or another day). The set-ups are
run.sh's, in its order. Usage: python3 summarise.py OUT ITERATIONS SETUP... > table_ITERATIONS.md"""
import csv
import json
import os
import statistics
import sys

SIZES = [1000, 5000]
SEEDS = [0, 1, 2]


def last_row(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows[-1], rows


def run_figures(d):
    score, _ = last_row(os.path.join(d, "scores.csv"))
    gap_last, gaps = last_row(os.path.join(d, "d_gap.csv"))
    recs = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl"))]
    return {
        "iteration": int(score["iteration"]),
        "fid": float(score["fid"]),
        "class_acc": float(score["class_acc"]),
        "recall": float(score["recall"]),
        "coverage": float(score["coverage"]),
        "gap": float(gap_last["gap"]),
        "gap_max": max(float(r["gap"]) for r in gaps),
        "ada_p": recs[-1].get("ada_p", 0.0),
        "img_s": statistics.median(r["img_s"] for r in recs[1:]) if len(recs) > 1 else 0.0,
    }


def cell(values, digits):
    m = statistics.mean(values)
    return f"{m:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


FIELDS = ["iteration", "fid", "class_acc", "recall", "coverage", "gap", "gap_max", "ada_p", "img_s"]


def kept_rows(path):
    """scores_ITERATIONS.csv's rows by (images, setup, seed), their figures as numbers."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {(int(r["images"]), r["setup"], int(r["seed"])): {k: float(r[k]) for k in FIELDS}
                for r in csv.DictReader(f)}


def main(out, iterations, setups):
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"scores_{iterations}.csv")
    runs = kept_rows(table)
    for n in SIZES:
        for s in setups:
            for seed in SEEDS:
                try:
                    runs[(n, s, seed)] = run_figures(os.path.join(out, f"n{n}_{s}_s{seed}"))
                except (OSError, KeyError, IndexError, ValueError):
                    pass
    rows = []
    print("| images | set-up | runs | domain FID | class acc | recall | coverage | D gap (last) | D gap (max) | ADA p (last) | img/s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in SIZES:
        for s in setups:
            figs = [runs[(n, s, seed)] for seed in SEEDS if (n, s, seed) in runs]
            rows += [{"images": n, "setup": s, "seed": seed, **runs[(n, s, seed)]} for seed in SEEDS if (n, s, seed) in runs]
            if not figs:
                continue
            col = lambda k, dg: cell([f[k] for f in figs], dg)
            print(f"| {n} | {s} | {len(figs)} | {col('fid', 1)} | {col('class_acc', 3)} | {col('recall', 3)} | "
                  f"{col('coverage', 3)} | {col('gap', 3)} | {col('gap_max', 3)} | {col('ada_p', 2)} | "
                  f"{statistics.mean(f['img_s'] for f in figs):.0f} |")
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["images", "setup", "seed"] + FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({**r, "iteration": int(r["iteration"])})


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: summarise.py OUT ITERATIONS SETUP...")
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
