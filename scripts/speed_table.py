#!/usr/bin/env python3
"""The speed table of scripts/gpu_check.sh: one markdown table from the JSON its speed steps
wrote into DIR, per config a row for each of
  train loop        CFG.train.metrics.jsonl: `hamgan train`'s metrics.jsonl; images/s from the
                    iteration and wall_s of the report at iteration >= --settle (the warm-up
                    before it) and the last one, times the images per iteration (img_s / it_s)
  train loop K=V    CFG.train.KEY=VALUE.metrics.jsonl: the same with one switch set, where present
  bench             CFG.bench.json: `hamgan bench train --json`
  bench KEY=VALUE   CFG.bench.KEY=VALUE.json: the same with one switch set, for each --switch
                    KEY, VALUE true and false
  eager torch       CFG.eager.json: scripts/bench_torch_eager.py --json, the same model in PyTorch
TFLOP/s of every row: its images/s times the FLOPs per image of the config's bench row (`hamgan
info`'s count, gan/train/step_cost.h: the folded convolutions' count whatever train.folded_convs
says), one count per model, so the rows compare as their images/s do. The bound: who waits on
whom, by `bench train`'s rule (gan/bench/train_bench.h step_bound) from the host's and device's
ms per step and, where profiled, the device's busy share; "undetermined" where the two times
agree unprofiled. A row without its file (step failed, skipped or cut by the deadline) says so. Under the table, per config: eager
torch against bench, and the eager model's parameters against bench's (params_g, params_d in both
JSON objects).

  speed_table.py DIR CONFIG... [--switch KEY]... [--settle N]
"""
import argparse
import json
import os


def load_json(path):
    """The last JSON object line of the file, or None (missing, empty, cut off)."""
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def train_speed(path, settle):
    """{"images_per_s", "iterations"} from metrics.jsonl, or None with too few reports."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a line cut by the time limit
                if all(k in r for k in ("iteration", "wall_s", "it_s", "img_s")):
                    rows.append(r)
    except OSError:
        return None
    base = next((r for r in rows if r["iteration"] >= settle), None)
    last = rows[-1] if rows else None
    if base is None or last is base or last["wall_s"] <= base["wall_s"] or last["it_s"] <= 0:
        return None
    per_it = last["img_s"] / last["it_s"]  # batch x ranks x n_dis, as the reporter counts images
    its = last["iteration"] - base["iteration"]
    return {"images_per_s": its / (last["wall_s"] - base["wall_s"]) * per_it,
            "iterations": f"{base['iteration']}-{last['iteration']}"}


def num(v, fmt):
    if v is None:
        return "-"
    return format(v, fmt) if abs(v) >= 1 or v == 0 else format(v, ".2g")  # a CPU's 0.0094 TFLOP/s


BOUND_MARGIN = 0.9  # gan/bench/train_bench.h kBoundMargin: "clearly below" is under 90% of the other


def step_bound(host_ms, device_ms, device_busy=None):
    """gan/bench/train_bench.h step_bound's word: decided here from the JSON's figures, so files
    from any version of `bench train` read alike."""
    if host_ms < BOUND_MARGIN * device_ms:
        return "device"
    if device_ms < BOUND_MARGIN * host_ms:
        return "host"
    if device_busy is None:
        return "undetermined"  # the host blocked on a full launch queue, or the device waited
    return "device" if device_busy >= BOUND_MARGIN else "host"


def steps_cell(r):
    if r.get("device_median_ms") is None or r.get("host_median_ms") is None:
        return "-"
    busy = r.get("device_busy")
    if r.get("bound") == "cpu":
        bound = "cpu"
    else:
        bound = step_bound(r["host_median_ms"], r["device_median_ms"], busy)
        if busy is not None:
            bound += f", device busy {100 * busy:.1f}%"
    return f"{r['host_median_ms']:.1f} / {r['device_median_ms']:.1f} ({bound})"


def switch_values(switch):
    """'train.upsample_conv:subpixel,transposed' -> its key and words; a bare key: true and false."""
    key, _, words = switch.partition(":")
    return key, tuple(words.split(",")) if words else ("true", "false")


def table(d, configs, switches, settle):
    switches = [switch_values(s) for s in switches]
    out = ["| config | what | images/s | TFLOP/s | peak MiB | host / device ms per step (bound) |",
           "|---|---|---:|---:|---:|---|"]
    notes = []
    for cfg in configs:
        bench = load_json(os.path.join(d, f"{cfg}.bench.json"))
        switched = [(f"bench {key}={value}", load_json(os.path.join(d, f"{cfg}.bench.{key}={value}.json")))
                    for key, values in switches for value in values]
        # The bench row's count; without it a switch row's (a file from before the count was
        # pinned to the folded forms carries the plain forms' with folded_convs=false).
        counted = [r for r in [bench] + [r for _, r in switched] if r and r.get("images_per_s") and r.get("tflops")]
        flop_per_image = counted[0]["tflops"] / counted[0]["images_per_s"] if counted else None

        def tflops(img_s):
            return img_s * flop_per_image if flop_per_image and img_s else None

        def missing(what):
            out.append(f"| {cfg} | {what} | no result | - | - | - |")

        t = train_speed(os.path.join(d, f"{cfg}.train.metrics.jsonl"), settle)
        if t:
            out.append(f"| {cfg} | train loop (it. {t['iterations']}) | {t['images_per_s']:.1f} | "
                       f"{num(tflops(t['images_per_s']), '.1f')} | - | - |")
        else:
            missing("train loop")
        for key, values in switches:
            for value in values:
                t = train_speed(os.path.join(d, f"{cfg}.train.{key}={value}.metrics.jsonl"), settle)
                if t:  # only where the check ran the loop with this switch
                    out.append(f"| {cfg} | train loop {key}={value} (it. {t['iterations']}) | "
                               f"{t['images_per_s']:.1f} | {num(tflops(t['images_per_s']), '.1f')} | - | - |")
        for what, r in [("bench", bench)] + switched:
            if not r:
                missing(what)
                continue
            out.append(f"| {cfg} | {what} | {r['images_per_s']:.1f} | {num(tflops(r['images_per_s']), '.1f')} | "
                       f"{num(r.get('peak_mib'), '.0f')} | {steps_cell(r)} |")
        e = load_json(os.path.join(d, f"{cfg}.eager.json"))
        if e:
            out.append(f"| {cfg} | eager torch {e.get('torch', '').split('+')[0]} | {e['images_per_s']:.1f} | "
                       f"{num(tflops(e['images_per_s']), '.1f')} | {num(e.get('peak_mib'), '.0f')} | "
                       f"{steps_cell(e)} |")
            if bench:
                notes.append(f"- {cfg}: hamgan bench / eager torch = {bench['images_per_s'] / e['images_per_s']:.2f}")
            hp = (bench.get("params_g"), bench.get("params_d")) if bench else (None, None)
            ep = (e.get("params_g"), e.get("params_d"))
            if None not in hp and None not in ep:
                verdict = "the same" if hp == ep else "DIFFERENT: the two models differ"
                notes.append(f"- {cfg}: parameters G {ep[0]:,} / D {ep[1]:,} eager, G {hp[0]:,} / D {hp[1]:,} "
                             f"hamgan bench: {verdict}")
        else:
            missing("eager torch")
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("configs", nargs="+")
    p.add_argument("--switch", action="append", default=[],
                   help="a bench switch: a boolean key (train.folded_convs), or KEY:WORD,WORD (train.upsample_conv:subpixel,transposed)")
    p.add_argument("--settle", type=int, default=10, help="train loop: first iteration of the timed span")
    a = p.parse_args()
    if not os.path.isdir(a.dir):
        p.error(f"{a.dir}: no such folder (the speed steps' JSON)")
    print(table(a.dir, a.configs, a.switch, a.settle), end="")


if __name__ == "__main__":
    main()
