"""scripts/seed_table.py on made-up runs whose means and standard deviations are known:
two seeds of "a" (class acc 0.8 / 0.9 -> 0.850 ± 0.071), one of "b" (no sd), a directory
without the _s<seed> suffix ignored, the rows ranked by the mean FID of the last four, and
Welch's t against the first row ("d", two seeds). Then
scripts/seed_bands.py on the same runs: its curves' means and sds, and an SVG with a line per
name and panel and a band only where there are two seeds."""
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

root = sys.argv[1]
header = "iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,ifid\n"


def run_dir(base, name, rows):
    os.makedirs(os.path.join(base, name))
    with open(os.path.join(base, name, "fid.csv"), "w") as f:
        f.write(header)
        for it, fid, acc in rows:
            f.write(f"{it},{fid},,,1000,1.0,{acc},clf,0.7,0.3,,,\n")


with tempfile.TemporaryDirectory() as d:
    run_dir(d, "a_s0", [(500, 50, 0.7), (1000, 40, 0.8)])
    run_dir(d, "a_s1", [(500, 60, 0.7), (1000, 20, 0.9)])
    run_dir(d, "b_s0", [(1000, 10, 0.95)])
    run_dir(d, "c", [(1000, 1, 1.0)])
    run_dir(d, "d_s0", [(1000, 5, 0.9)])
    run_dir(d, "d_s1", [(1000, 7, 0.96)])
    out = subprocess.run([sys.executable, os.path.join(root, "scripts/seed_table.py"), d],
                         check=True, capture_output=True, text=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 5, out  # header, rule, d, b, a ("c" has no seed suffix)
    first, b, a = lines[2], lines[3], lines[4]
    assert first.startswith("| d | 2 | 1000 | 0.930 ± 0.042 | 6.0 ± 1.4 |") and first.endswith("| - |"), first
    assert b.startswith("| b | 1 | 1000 | 0.950 | 10.0 |") and b.endswith("| -, - |"), b  # no sd: no t
    # a: last class acc 0.8, 0.9 -> 0.850 ± 0.071; last FID 40, 20 -> 30.0 ± 14.1;
    # last-4 means (45, 0.75) and (40, 0.8) -> FID 42.5 ± 3.5, acc 0.775 ± 0.035.
    assert a.startswith("| a | 2 | 1000 | 0.850 ± 0.071 | 30.0 ± 14.1 | 0.700 ± 0.000 | 0.300 ± 0.000 |"), a
    # Welch's t against d: FID (42.5 - 6) / sqrt(12.5 / 2 + 2 / 2) = 13.6, class accuracy
    # (0.775 - 0.93) / sqrt(0.00125 / 2 + 0.0018 / 2) = -4.0.
    assert a.endswith("| 0.775 ± 0.035 | 42.5 ± 3.5 | 13.6, -4.0 |"), a
    sys.path.insert(0, os.path.join(root, "scripts"))
    import seed_bands
    from seed_table import load_groups
    acc = seed_bands.curves(load_groups(d), "class_acc")
    assert [p[0] for p in acc["a"]] == [500, 1000] and [p[0] for p in acc["b"]] == [1000], acc
    assert abs(acc["a"][1][1] - 0.85) < 1e-12 and abs(acc["a"][1][2] - 0.1 / 2 ** 0.5) < 1e-12, acc
    assert math.isnan(acc["b"][0][2]), acc  # one seed: no sd, no band
    assert [p[0] for p in seed_bands.curves(load_groups(d), "fid", 1000)["a"]] == [1000]  # FROM
    fig = os.path.join(d, "bands.svg")
    subprocess.run([sys.executable, os.path.join(root, "scripts/seed_bands.py"), d, fig],
                   check=True, capture_output=True, text=True)
    svg = ET.parse(fig).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(ns + "polyline")) == 6, "a line per name (a, b, d) in each of 2 panels"
    assert len(svg.findall(ns + "polygon")) == 4, "a band for a and d (2 seeds) in each panel, none for b"
print("seed_table: ok")
