"""Oracle for test_seed_stats: scipy.stats.ttest_ind(a, b, equal_var=False) (Welch's t and its
two-sided p), numpy's mean and std(ddof=1), and the Welch-Satterthwaite degrees of freedom, on
sample pairs of several sizes and spreads; and made-up seeded runs (RUNS/<name>_s<seed>/scores.csv)
with the table `hamgan compare --seeds` must print for them, every number computed here."""
import os

import numpy as np
import torch
from scipy import stats

from common import out_dir, save

HEADER = "iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,ifid\n"


def welch(a, b):
    t, p = stats.ttest_ind(a, b, equal_var=False)
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return t, df, p


def cell(xs, digits):
    xs = np.asarray(xs, dtype=np.float64)
    xs = xs[~np.isnan(xs)]
    if len(xs) == 0:
        return "-"
    s = f"{xs.mean():.{digits}f}"
    return s + (f" ± {np.std(xs, ddof=1):.{digits}f}" if len(xs) > 1 else "")


def t_cell(a, b):
    if len(a) < 2 or len(b) < 2:
        return "-"
    t, _, p = welch(a, b)
    return f"{t:.1f} ({p:.2f})"


def main():
    d = out_dir()
    rng = np.random.default_rng(7)
    cases = {}
    sizes = [(2, 2), (3, 3), (3, 5), (5, 3), (10, 4), (30, 30), (2, 8)]
    for k, (na, nb) in enumerate(sizes):
        a = rng.normal(60 + k, 3 + k, na)
        b = rng.normal(62, 1 + 2 * (k % 3), nb)
        t, df, p = welch(a, b)
        cases[f"case{k}.a"] = torch.from_numpy(a)
        cases[f"case{k}.b"] = torch.from_numpy(b)
        cases[f"case{k}.expected"] = torch.tensor([a.mean(), np.std(a, ddof=1), b.mean(), np.std(b, ddof=1), t, df, p],
                                                  dtype=torch.float64)
    # Student's t's two-sided p alone, including fractional and large df and large |t|.
    grid = [(t, df) for t in (0.0, 0.3, -1.7, 2.8, 6.0, -40.0) for df in (1.0, 2.0, 2.5, 4.3, 30.0, 1000.0)]
    cases["p.t_df"] = torch.tensor(grid, dtype=torch.float64)
    cases["p.expected"] = torch.tensor([2 * stats.t.sf(abs(t), df) for t, df in grid], dtype=torch.float64)
    save(d, "welch.pt", cases)

    # Seeded runs: name -> seed -> [(iteration, fid, class_acc, precision, recall)].
    runs = {}
    for name, seeds, n_rows in (("alpha", 3, 6), ("beta", 3, 5), ("gamma", 1, 4), ("delta", 2, 3)):
        runs[name] = {}
        for s in range(seeds):
            rows = []
            for i in range(n_rows):
                rows.append((500 * (i + 1), float(rng.uniform(20, 90)), float(rng.uniform(0.5, 0.95)),
                             float(rng.uniform(0.3, 0.8)), float(rng.uniform(0.1, 0.6))))
            runs[name][s] = rows
    root = os.path.join(d, "runs")
    for name, seeds in runs.items():
        for s, rows in seeds.items():
            os.makedirs(os.path.join(root, f"{name}_s{s}"), exist_ok=True)
            with open(os.path.join(root, f"{name}_s{s}", "scores.csv"), "w") as f:
                f.write(HEADER)
                for it, fid, acc, pr, rc in reversed(rows):  # any row order: sorted by iteration
                    f.write(f"{it},{fid!r},,,1000,1.5,{acc!r},clf,{pr!r},{rc!r},,,\n")
    os.makedirs(os.path.join(root, "unseeded"), exist_ok=True)  # no _s<seed>: in no group
    with open(os.path.join(root, "unseeded", "scores.csv"), "w") as f:
        f.write(HEADER + "500,1.0,,,1000,1.5,0.99,clf,,,,,\n")

    def per_seed(seeds, col, last):
        return [np.mean([r[col] for r in rows[-last:]]) for rows in seeds.values()]

    lines = []
    for name, seeds in runs.items():
        fid4, acc4 = per_seed(seeds, 1, 4), per_seed(seeds, 2, 4)
        its = sorted({rows[-1][0] for rows in seeds.values()})
        text = (f"{len(seeds)} | {'/'.join(map(str, its))} | {cell(per_seed(seeds, 2, 1), 3)} | "
                f"{cell(per_seed(seeds, 1, 1), 1)} | {cell(per_seed(seeds, 3, 1), 3)} | {cell(per_seed(seeds, 4, 1), 3)} | "
                f"{cell(acc4, 3)} | {cell(fid4, 1)}")
        lines.append((np.mean(fid4), name, fid4, acc4, text))
    lines.sort(key=lambda x: x[0])
    first = lines[0]
    table = ("| module | seeds | iteration | class acc | domain FID | precision | recall | last 4: class acc | "
             "last 4: FID | t (p) vs first: FID, acc |\n|---|---|---|---|---|---|---|---|---|---|\n")
    for _, name, fid4, acc4, text in lines:
        t = "-" if name == first[1] else f"{t_cell(fid4, first[2])}, {t_cell(acc4, first[3])}"
        table += f"| {name} | {text} | {t} |\n"
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write(table)


if __name__ == "__main__":
    main()
