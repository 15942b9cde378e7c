#!/usr/bin/env python3
"""Curves with error bands over seeds (issue 23's module ranking), as one SVG figure.

  scripts/seed_bands.py OUT FIGURE.svg [FROM]   (run directories OUT/<name>_s<seed>/fid.csv, as
                                                 for scripts/seed_table.py; FROM: plot only
                                                 iterations >= FROM, to zoom on the end)

Two panels, class accuracy and domain FID against iterations: per name the mean over its seeds
at every scored iteration that all its seeds have, and a band of +- one standard deviation
(n - 1). SVG, written with the standard library only, so it needs no plotting package."""
import math
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_table import load_groups, mean_sd, num  # noqa: E402

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 460, 300, 56, 12, 28, 40


def curves(groups, key, start=0):
    """name -> [(iteration, mean, sd)] over the iterations >= start that every seed of that name
    has."""
    out = {}
    for name, seeds in groups.items():
        by_seed = [{int(r["iteration"]): num(r, key) for r in rows} for rows in seeds.values()]
        common = sorted(it for it in set.intersection(*(set(d) for d in by_seed)) if it >= start)
        pts = [(it, *mean_sd([d[it] for d in by_seed])) for it in common]
        out[name] = [p for p in pts if not math.isnan(p[1])]
    return out


def panel(x0, title, data, order):
    its = [p[0] for pts in data.values() for p in pts]
    lo = [p[1] - (0 if math.isnan(p[2]) else p[2]) for pts in data.values() for p in pts]
    hi = [p[1] + (0 if math.isnan(p[2]) else p[2]) for pts in data.values() for p in pts]
    if not its:
        return [f'<text x="{x0 + W / 2}" y="{H / 2}" text-anchor="middle">{escape(title)}: no data</text>']
    xa, xb = min(its), max(its)
    ya, yb = min(lo), max(hi)
    if xb == xa:
        xb = xa + 1
    if yb == ya:
        yb = ya + 1
    sx = lambda x: x0 + PAD_L + (x - xa) / (xb - xa) * (W - PAD_L - PAD_R)
    sy = lambda y: PAD_T + (yb - y) / (yb - ya) * (H - PAD_T - PAD_B)
    g = [f'<text x="{x0 + W / 2}" y="16" text-anchor="middle" font-weight="bold">{escape(title)}</text>',
         f'<rect x="{x0 + PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" '
         'fill="none" stroke="#444"/>']
    for i in range(5):  # axis ticks
        y = ya + (yb - ya) * i / 4
        x = xa + (xb - xa) * i / 4
        g.append(f'<text x="{x0 + PAD_L - 4}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.3g}</text>')
        g.append(f'<text x="{sx(x):.1f}" y="{H - PAD_B + 14}" text-anchor="middle">{x:.0f}</text>')
    g.append(f'<text x="{x0 + W / 2}" y="{H - 8}" text-anchor="middle">iteration</text>')
    for name in order:
        pts, c = data.get(name, []), COLOURS[order.index(name) % len(COLOURS)]
        if not pts:
            continue
        band = [(p[0], p[1] + p[2]) for p in pts if not math.isnan(p[2])]
        band += [(p[0], p[1] - p[2]) for p in reversed(pts) if not math.isnan(p[2])]
        if band:
            g.append(f'<polygon fill="{c}" fill-opacity="0.18" stroke="none" points="' +
                     " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in band) + '"/>')
        g.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.8" points="' +
                 " ".join(f"{sx(p[0]):.1f},{sy(p[1]):.1f}" for p in pts) + '"/>')
    return g


def main(out, figure, start=0):
    groups = load_groups(out)
    order = sorted(groups)
    body = panel(0, "class accuracy (mean ± sd over seeds)", curves(groups, "class_acc", start), order)
    body += panel(W, "domain FID (mean ± sd over seeds)", curves(groups, "fid", start), order)
    for i, name in enumerate(order):  # legend under the panels
        x, c = 10 + (i % 5) * 180, COLOURS[i % len(COLOURS)]
        y = H + 14 + (i // 5) * 18
        body.append(f'<rect x="{x}" y="{y - 9}" width="14" height="10" fill="{c}"/>')
        body.append(f'<text x="{x + 20}" y="{y}">{escape(name)} (n = {len(groups[name])})</text>')
    height = H + 24 + ((len(order) + 4) // 5) * 18
    with open(figure, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{height}" '
                f'font-family="sans-serif" font-size="11">\n<rect width="100%" height="100%" fill="white"/>\n')
        f.write("\n".join(body) + "\n</svg>\n")
    print(f"seed_bands: {figure} ({len(order)} names)")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 0)
