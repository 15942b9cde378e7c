#!/usr/bin/env python3
"""Mean +- standard deviation over seeds of scored runs (issue 23's module ranking).

  scripts/seed_table.py OUT        (run directories OUT/<name>_s<seed>/fid.csv, from
                                    SEEDS=... scripts/compare_modules.sh)

Per name: the last checkpoint's class accuracy, domain FID, precision and recall, and the mean of
the last four checkpoints (a single 1000-sample score moves by about +-8 FID), each as mean +- sd
over the seeds (sd with n - 1; "-" for one seed). Rows sorted by the last-four FID; the last column
is Welch's t of each row's last-four FID and class accuracy against the first row's."""
import csv
import math
import os
import re
import sys
from collections import defaultdict


def mean_sd(xs):
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return float("nan"), float("nan")
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else float("nan")
    return m, sd


def welch_t(a, na, b, nb):
    """Welch's t of two means from (mean, sd) and their seed counts: how many standard errors
    apart they are (nan without an sd on either side). With 3 seeds each, |t| > 2.8 is a
    difference larger than the seeds' spread at the 5% level (Welch's df >= 2.0 .. 4)."""
    (ma, sa), (mb, sb) = a, b
    se = math.sqrt(sa * sa / na + sb * sb / nb) if na > 1 and nb > 1 else float("nan")
    return (ma - mb) / se if se > 0 else float("nan")


def tfmt(t):
    return "-" if math.isnan(t) else f"{t:.1f}"


def fmt(pair, digits):
    m, sd = pair
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f}" + ("" if math.isnan(sd) else f" ± {sd:.{digits}f}")


def num(row, key):
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return float("nan")


def load_groups(out):
    """name -> seed -> fid.csv rows sorted by iteration, for every OUT/<name>_s<seed>/fid.csv."""
    groups = defaultdict(dict)
    for entry in sorted(os.listdir(out)):
        m = re.fullmatch(r"(.+)_s(\d+)", entry)
        path = os.path.join(out, entry, "fid.csv")
        if m and os.path.isfile(path):
            with open(path) as f:
                rows = sorted(csv.DictReader(f), key=lambda r: int(r["iteration"]))
            if rows:
                groups[m.group(1)][int(m.group(2))] = rows
    if not groups:
        sys.exit(f"seed_table: no {out}/<name>_s<seed>/fid.csv found")
    return groups


def main(out):
    groups = load_groups(out)
    lines = []
    for name, seeds in groups.items():
        last = [rows[-1] for rows in seeds.values()]
        last4 = [rows[-4:] for rows in seeds.values()]
        its = sorted({int(r["iteration"]) for r in last})
        cells = {
            "acc": mean_sd([num(r, "class_acc") for r in last]),
            "fid": mean_sd([num(r, "fid") for r in last]),
            "prec": mean_sd([num(r, "precision") for r in last]),
            "rec": mean_sd([num(r, "recall") for r in last]),
            "acc4": mean_sd([sum(num(r, "class_acc") for r in rs) / len(rs) for rs in last4]),
            "fid4": mean_sd([sum(num(r, "fid") for r in rs) / len(rs) for rs in last4]),
        }
        lines.append((cells["fid4"][0], name, len(seeds), its, cells))
    lines.sort(key=lambda t: (math.isnan(t[0]), t[0]))
    print("| module | seeds | iteration | class acc | domain FID | precision | recall | last 4: class acc | "
          "last 4: FID | t vs first: FID, acc |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    first_n, first = lines[0][2], lines[0][4]
    for _, name, n, its, c in lines:
        t = "-" if name == lines[0][1] else \
            ", ".join(tfmt(welch_t(c[k], n, first[k], first_n)) for k in ("fid4", "acc4"))
        print(f"| {name} | {n} | {'/'.join(map(str, its))} | {fmt(c['acc'], 3)} | {fmt(c['fid'], 1)} | "
              f"{fmt(c['prec'], 3)} | {fmt(c['rec'], 3)} | {fmt(c['acc4'], 3)} | {fmt(c['fid4'], 1)} | {t} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
