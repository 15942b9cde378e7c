#!/usr/bin/env bash
# The border-stripes batch (docs/band/README.md): trains the 128 px smoke preset
# (configs/imagenet128_cpu_smoke.yaml) on the packed real-photo folder for ITERS iterations in a
# set of settings x seeds, samples 10 EMA images per class from the last checkpoint and measures
# scripts/band_stat.py: `stripes`, the period-2 amplitude in gray levels near either border (the
# training photos 0.1; smoke runs at 150 iterations 2-4 with SAGAN, 2-9 with HamGAN), and the
# first, end-only statistic `band`. On one GPU (several small runs at once) or a CPU:
#   python3 scripts/photo_folder.py /tmp/photos && build/hamgan prepare --data /tmp/photos \
#     --out .photos128/train.packed --resolution 128
#   BIN=build/hamgan DEVICE=cpu ONLY="base sagan" SEEDS="0 1 2" LONG=0 EXTRA=0 PAR=2 THREADS=1 \
#     BUDGET=3600 PYTHON=/usr/bin/python3 scripts/band_experiment.sh      (2 cores: ~4 min a pair)
#
#   scripts/band_experiment.sh                                   (after build-gpu/hamgan exists)
#   BIN=build-gpu-sim/hamgan DEVICE=cpu ITERS=3 ONLY=base SEEDS=0 LONG=0 PAR=1 THREADS=1 scripts/band_experiment.sh
#                                                      (dry check on a CPU)
#
# Environment (defaults): BIN (build-gpu/hamgan), DATA (.photos128/train.packed: 10 classes),
# OUT (runs/band: band.csv, band.jsonl, band.log, band_main.png, band_more.png),
# W (/tmp/band: run folders, wiped at the start), DEVICE (cuda), ITERS (150), SEEDS ("0 1 2"),
# ONLY (space-separated settings to run; default all), EXTRA (1: also the extra settings after the
# main ones), LONG (1: the base setting at LONG_ITERS (1000), seed 0, scored at LONG_AT),
# LONG_EVERY (50: the long run's checkpoint_every), PAR (6 runs at once), THREADS (2 CPU threads
# per process), BUDGET (230 s: no run starts after BUDGET - 45 s, training is stopped at BUDGET,
# sampling 30 s later: all done in ~5 min), PYTHON (python3), CHECK (1: only resolve every
# setting's config, then exit), KEEP_CKPT (1: keep the checkpoints; default: deleted once sampled).
# Short runs checkpoint only at their end (69 MB each). Runs go long first, then seed 0 of every
# setting, then seeds 1 and 2, then the extras: what the budget cuts is logged as SKIP / NA rows.
#
# Settings (the type changes cannot be command-line overrides: `generator.context.type=self_attention`
# over the HamGAN preset is refused for the base's ham keys (d, r, ...), so they are preset files
# written into $W/presets over configs/imagenet128_sagan.yaml with the smoke preset's changes):
#   base        the smoke preset: NMF Hamburger at 32x32 in G (d 256, r 32) and D (d 128, r 16)
#   sagan       self-attention in G and D (the smoke preset's sizes over imagenet128_sagan.yaml)
#   g_only      NMF in G, self-attention in D          d_only   self-attention in G, NMF in D
#   norm_bases  G's and D's context.normalize_bases=true
#   inv_t       G's context.inv_t=0.05                 res16    G's Hamburger at 16x16
#   ham_vq      G's ham soft VQ (D NMF)                ham_cd   G's ham concept decomposition (D NMF)
#   steps1      G's context.steps=1                    fp32     train.amp=false
#   plain       train.folded_convs=false (the plain upsample + conv and conv + pool forms)
#   extras (EXTRA=1, after the main ones, while the budget lasts):
#   g_online    G's context.init=online                g_seeded G's context.seed=0 (fixed bases draw)
#   g_bptt      G's context.grad=bptt                  bs32     train.batch_size=32
#   d_none      NMF in G, no context in D
#   long        base at LONG_ITERS, seed 0, band at the checkpoints LONG_AT ("50 150 300 500 1000")
set -u
cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
bin=${BIN:-build-gpu/hamgan}
DATA=${DATA:-.photos128/train.packed}
OUT=${OUT:-runs/band}
W=${W:-/tmp/band}
DEVICE=${DEVICE:-cuda}
ITERS=${ITERS:-150}
SEEDS=${SEEDS:-"0 1 2"}
ONLY=${ONLY:-}
EXTRA=${EXTRA:-1}
LONG=${LONG:-1}
LONG_ITERS=${LONG_ITERS:-1000}
LONG_AT=${LONG_AT:-"50 150 300 500 1000"}
LONG_EVERY=${LONG_EVERY:-50}
PAR=${PAR:-6}
THREADS=${THREADS:-2}
BUDGET=${BUDGET:-230}
# A run's training is stopped after iterations x SEC_PER_IT ms + 120 s: an H100 takes ~0.2 s per
# iteration with 6 runs at once, one core of a 2-core CPU ~1.3 s with 2 at once.
if [[ $DEVICE == cpu ]]; then SEC_PER_IT=${SEC_PER_IT:-4000}; else SEC_PER_IT=${SEC_PER_IT:-667}; fi
PY=${PYTHON:-python3}
SMOKE=configs/imagenet128_cpu_smoke.yaml
START=$(date +%s)

[[ -x $bin ]] || { echo "band: no binary $bin" >&2; exit 1; }
[[ -f $DATA ]] || { echo "band: no data $DATA (scripts/photo_folder.py, then hamgan prepare; carry it)" >&2; exit 1; }
case $W in "" | / | "$REPO" | "$HOME") echo "band: refusing W=$W" >&2; exit 1 ;; esac
if [[ -e $W && ! -f $W/.band_work ]]; then echo "band: $W exists and is not ours" >&2; exit 1; fi
rm -rf "$W" && mkdir -p "$W/presets" "$OUT" && touch "$W/.band_work"
rm -f "$OUT"/band.csv "$OUT"/band.jsonl "$OUT"/band.log "$OUT"/band_*.png
DATA=$(cd "$(dirname "$DATA")" && pwd)/$(basename "$DATA")

# --- preset files for the settings that change a context type ------------------------------------
P=$W/presets
cat >"$P/sagan.yaml" <<EOF
# configs/imagenet128_cpu_smoke.yaml's changes over imagenet128_sagan.yaml (self-attention in G and D)
base: $REPO/configs/imagenet128_sagan.yaml
generator: {ch: 16}
discriminator: {ch: 16}
train: {batch_size: 8, iterations: 1000, time_limit_minutes: 20, ema_start: 50, log_every: 5,
        sample_every: 50, checkpoint_every: 50, keep_checkpoints: 5}
EOF
G_NMF='generator:
  context: {type: ham_nmf, resolution: 32, d: 256, r: 32, steps: 6}'
D_NMF='discriminator:
  context: {type: ham_nmf, resolution: 32, d: 128, r: 16, steps: 6}'
printf 'base: sagan.yaml\n%s\n%s\n' "$G_NMF" "$D_NMF" >"$P/both_nmf.yaml"  # = base (checked below)
printf 'base: sagan.yaml\n%s\n' "$G_NMF" >"$P/g_only.yaml"
printf 'base: sagan.yaml\n%s\n' "$D_NMF" >"$P/d_only.yaml"
printf 'base: sagan.yaml\n%s\ndiscriminator:\n  context: {type: none}\n' "$G_NMF" >"$P/d_none.yaml"
printf 'base: sagan.yaml\n%s\n%s\n' "${G_NMF/ham_nmf/ham_vq}" "$D_NMF" >"$P/ham_vq.yaml"
printf 'base: sagan.yaml\n%s\n%s\n' "${G_NMF/ham_nmf/ham_cd}" "$D_NMF" >"$P/ham_cd.yaml"

# name|config|overrides
MAIN="base|$SMOKE|
sagan|$P/sagan.yaml|
g_only|$P/g_only.yaml|
d_only|$P/d_only.yaml|
norm_bases|$SMOKE|generator.context.normalize_bases=true discriminator.context.normalize_bases=true
inv_t|$SMOKE|generator.context.inv_t=0.05
res16|$SMOKE|generator.context.resolution=16
ham_vq|$P/ham_vq.yaml|
ham_cd|$P/ham_cd.yaml|
steps1|$SMOKE|generator.context.steps=1
fp32|$SMOKE|train.amp=false
plain|$SMOKE|train.folded_convs=false"
EXTRAS="g_online|$SMOKE|generator.context.init=online
g_seeded|$SMOKE|generator.context.seed=0
g_bptt|$SMOKE|generator.context.grad=bptt
bs32|$SMOKE|train.batch_size=32
d_none|$P/d_none.yaml|"
COMMON="data.path=$DATA data.format=packed model.n_classes=10 train.device=$DEVICE train.time_limit_minutes=0"

log() { echo "[band +$(($(date +%s) - START))s] $*"; }
left() { echo $((START + BUDGET - $(date +%s))); }
to() { local l; l=$(left); ((l < 20)) && l=20; ((l < $1)) && echo "$l" || echo "$1"; }  # min(cap, budget left)
wanted() { [[ -z $ONLY ]] || [[ " $ONLY " == *" $1 "* ]]; }

# --- preflight: every setting's config resolves (refused overrides show here), base = both_nmf -----
declare -A CFG OVR
ORDER=()
while IFS='|' read -r name cfg ovr; do
  [[ -z $name ]] && continue
  [[ $name == g_online || $name == g_seeded || $name == g_bptt || $name == bs32 || $name == d_none ]] &&
    [[ $EXTRA != 1 ]] && continue
  wanted "$name" || [[ $name == base && $LONG == 1 ]] || continue
  # shellcheck disable=SC2086
  if msg=$(timeout 60 "$bin" info -c "$cfg" --threads 1 $COMMON $ovr --get train.iterations 2>&1); then
    CFG[$name]=$cfg OVR[$name]=$ovr
    wanted "$name" && ORDER+=("$name")
  else
    log "SETTING $name REFUSED: $msg"
    echo "$name,,,NA,NA,NA,NA,NA,NA" >>"$W/refused.csv"
  fi
done <<<"$MAIN
$EXTRAS"
# The resolved sections model..data of config $1, as `hamgan info --get SECTION` prints them.
sections() {
  local s
  for s in model generator discriminator train data; do
    echo "$s:"
    # shellcheck disable=SC2086
    timeout 60 "$bin" info -c "$1" --threads 1 $COMMON --get "$s" || return 1
  done
}
if diff <(sections "$SMOKE") <(sections "$P/both_nmf.yaml") >"$W/preset_diff.txt"; then
  log "preset check: sagan.yaml + NMF in G and D resolves to the smoke preset exactly"
else
  log "preset check: sagan.yaml + NMF differs from the smoke preset:"; cat "$W/preset_diff.txt"
fi
log "settings: ${ORDER[*]}; seeds: $SEEDS; iterations $ITERS on $DEVICE; $PAR at once, budget ${BUDGET}s"
[[ ${CHECK:-0} == 1 ]] && exit 0

# --- one run: train, sample checkpoints, band statistic -> $R/rows.csv, $R/band.jsonl --------------
# run NAME SEED ITERS "ITERATIONS TO SCORE (empty: the last checkpoint)" [extra overrides...]
run() {
  local name=$1 seed=$2 iters=$3 at=$4; shift 4
  local tag=${name}_s$seed R=$W/${name}_s$seed
  mkdir -p "$R"
  local t0 rc
  t0=$(date +%s)
  # shellcheck disable=SC2086
  timeout -k 10 "$(to $((iters * SEC_PER_IT / 1000 + 120)))" "$bin" train -c "${CFG[$name]}" --out "$R/run" \
    --threads "$THREADS" --workers 1 $COMMON train.iterations="$iters" train.seed="$seed" \
    ${OVR[$name]} "$@" >"$R/train.log" 2>&1
  rc=$?
  log "$tag: train rc=$rc in $(($(date +%s) - t0))s"
  local ckpts=()
  if [[ -z $at ]]; then
    ckpts=("$(ls "$R"/run/checkpoints/ckpt_*.pt 2>/dev/null | sort | tail -n 1)")
  else
    for it in $at; do ckpts+=("$R/run/checkpoints/$(printf 'ckpt_%09d.pt' "$it")"); done
  fi
  for ck in "${ckpts[@]}"; do
    local it
    it=$(basename "${ck:-none}" .pt); it=${it#ckpt_}
    if [[ $it =~ ^[0-9]+$ ]]; then it=$((10#$it)); else it=NA; fi
    if (($(left) < -30)); then
      log "$tag: no time left to sample $it"; echo "$name,$seed,$it,NA,NA,NA,NA,NA,NA" >>"$R/rows.csv"; continue
    fi
    if [[ -z $ck || ! -f $ck ]]; then
      log "$tag: no checkpoint ${ck:-} (train rc=$rc)"; echo "$name,$seed,$it,NA,NA,NA,NA,NA,NA" >>"$R/rows.csv"; continue
    fi
    local S=$R/samples_$it sb=()
    [[ -n $at ]] && sb=(--standing-batches 16)  # intermediate checkpoints hold no standing statistics
    if ! timeout -k 10 "$(to 120)" "$bin" sample --checkpoint "$ck" --out "$S" --per-class 10 \
        --device "$DEVICE" --threads "$THREADS" "${sb[@]}" >>"$R/sample.log" 2>&1; then
      log "$tag: sample of $ck failed"; echo "$name,$seed,$it,NA,NA,NA,NA,NA,NA" >>"$R/rows.csv"; continue
    fi
    local js
    js=$(timeout 60 "$PY" scripts/band_stat.py "$S" 2>>"$R/sample.log")
    echo "$js" | sed "s|^{|{\"setting\": \"$name\", \"seed\": $seed, \"iteration\": $it, |" >>"$R/band.jsonl"
    echo "$js" | "$PY" -c "import json,sys; d=json.loads(sys.stdin.read() or '{}'); f=lambda k: 'NA' if d.get(k) is None else d[k]
print(f'$name,$seed,$it,{f(\"band\")},{f(\"rows\")},{f(\"cols\")},{f(\"stripes\")},{f(\"stripes_start\")},{f(\"stripes_end\")}')" >>"$R/rows.csv" 2>>"$R/sample.log" ||
      echo "$name,$seed,$it,NA,NA,NA,NA,NA,NA" >>"$R/rows.csv"
    log "$tag @$it: $(tail -n 1 "$R/rows.csv")"
  done
  [[ ${KEEP_CKPT:-0} == 1 ]] || rm -rf "$R/run/checkpoints"  # 69 MB each
}

launch() {  # launch NAME SEED ...: in the background, at most PAR at once, none after the budget
  while (($(jobs -rp | wc -l) >= PAR)); do wait -n; done
  if (($(left) < 45)); then log "SKIP $1 seed $2: budget spent"; echo "$1,$2,,NA,NA,NA,NA,NA,NA" >>"$W/skipped.csv"; return; fi
  run "$@" &
}

if [[ $LONG == 1 && -n ${CFG[base]:-} ]]; then
  CFG[long]=${CFG[base]} OVR[long]=${OVR[base]}
  launch long 0 "$LONG_ITERS" "$LONG_AT" train.checkpoint_every="$LONG_EVERY" train.keep_checkpoints=100
fi
SHORT="train.checkpoint_every=$ITERS train.keep_checkpoints=1"  # only the last (69 MB each)
main_names=" $(echo "$MAIN" | cut -d'|' -f1 | tr '\n' ' ') "
for seed in $SEEDS; do
  for name in "${ORDER[@]}"; do [[ $main_names == *" $name "* ]] && launch "$name" "$seed" "$ITERS" "" $SHORT; done
done
for seed in $SEEDS; do
  for name in "${ORDER[@]}"; do [[ $main_names != *" $name "* ]] && launch "$name" "$seed" "$ITERS" "" $SHORT; done
done
wait

# --- collect: CSV, JSON lines, trimmed log, montages ---------------------------------------------
{
  echo "setting,seed,iteration,band,rows,cols,stripes,stripes_start,stripes_end"
  cat "$W"/*/rows.csv "$W"/refused.csv "$W"/skipped.csv 2>/dev/null
} >"$OUT/band.csv"
cat "$W"/*/band.jsonl >"$OUT/band.jsonl" 2>/dev/null
{
  echo "# band $(date -u +%FT%TZ) bin=$bin device=$DEVICE iters=$ITERS seeds=$SEEDS; $("$bin" --version 2>&1 | head -n 1)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
  for R in "$W"/*_s*/; do
    echo "=== $(basename "$R")"
    head -n 5 "$R/train.log" 2>/dev/null; echo "..."; tail -n 25 "$R/train.log" 2>/dev/null
    tail -n 8 "$R/sample.log" 2>/dev/null; cat "$R/band.jsonl" 2>/dev/null
  done
} >"$OUT/band.log" 2>&1

"$PY" - "$W" "$OUT" <<'PYEOF' || log "montage failed"
# One row per (setting, seed 0): label | mean image of its samples, contrast-stretched (the band
# shows there) | six samples at 1:1 (period-2 stripes vanish when downscaled).
import glob, os, sys
import numpy as np
from PIL import Image, ImageDraw
W, OUT = sys.argv[1], sys.argv[2]
def row(label, sdir):
    files = sorted(glob.glob(os.path.join(sdir, "**", "*.png"), recursive=True))
    if not files:
        return None
    ims = [np.asarray(Image.open(f).convert("RGB"), dtype=np.float64) for f in files]
    m = np.mean(ims, axis=0).mean(axis=2)
    m = (m - m.min()) / max(m.max() - m.min(), 1e-9) * 255
    picks = [files[i * len(files) // 6] for i in range(6)]
    side = ims[0].shape[0]
    canvas = Image.new("RGB", (110 + 7 * (side + 2), side + 2), "white")
    d = ImageDraw.Draw(canvas)
    for j, t in enumerate(label.split("\n")):
        d.text((4, 4 + 12 * j), t, fill="black")
    canvas.paste(Image.fromarray(m.astype(np.uint8)).convert("RGB"), (110, 1))
    for i, f in enumerate(picks):
        canvas.paste(Image.open(f).convert("RGB"), (110 + (i + 1) * (side + 2), 1))
    return canvas
def band(sdir):
    import json
    try:
        for l in open(os.path.join(os.path.dirname(sdir.rstrip("/")), "band.jsonl")):
            d = json.loads(l)
            if os.path.normpath(d["dir"]).endswith(os.path.basename(sdir.rstrip("/"))):
                return (f"band {d['band']}\nstripes {d.get('stripes')}\n"
                        f"start {d.get('stripes_start')}\nend {d.get('stripes_end')}")
    except Exception:
        pass
    return ""
def sheet(dirs, path):
    rows = [r for r in (row(f"{lab}\n{band(s)}", s) for lab, s in dirs) if r]
    if not rows:
        return
    out = Image.new("RGB", (max(r.width for r in rows), sum(r.height for r in rows)), "white")
    y = 0
    for r in rows:
        out.paste(r, (0, y)); y += r.height
    out.save(path, optimize=True)
    print("wrote", path, out.size)
seed0 = sorted(glob.glob(os.path.join(W, "*_s0", "samples_*")))
main = [(os.path.basename(os.path.dirname(s))[:-3] + " @" + s.rsplit("_", 1)[1], s) for s in seed0
        if not os.path.basename(os.path.dirname(s)).startswith("long")]
order = ["base", "sagan", "g_only", "d_only", "norm_bases", "inv_t", "res16", "ham_vq", "ham_cd",
         "steps1", "fp32"]
key = lambda t: (order.index(t[0].split(" @")[0]) if t[0].split(" @")[0] in order else 99, t[0])
main.sort(key=key)
first = [t for t in main if t[0].split(" @")[0] in order]
rest = [t for t in main if t[0].split(" @")[0] not in order]
longs = sorted(glob.glob(os.path.join(W, "long_s0", "samples_*")), key=lambda s: int(s.rsplit("_", 1)[1]))
sheet(first, os.path.join(OUT, "band_main.png"))
sheet([("long @" + s.rsplit("_", 1)[1], s) for s in longs] + rest, os.path.join(OUT, "band_more.png"))
PYEOF

# --- summary: mean / min / max of the statistic per setting and iteration ------------------------
"$PY" - "$OUT/band.csv" <<'PYEOF' | tee -a "$OUT/band.log"
import csv, sys, collections
g = collections.OrderedDict()
for r in csv.DictReader(open(sys.argv[1])):
    g.setdefault((r["setting"], r["iteration"]), []).append(r)
print(f"{'setting':<12}{'iter':>6}{'n':>3}  {'band mean':>9}{'stripes mean':>13}{'min':>7}{'max':>7}"
      "   per seed: band, stripes (start/end)")
for (s, it), rs in g.items():
    ok = [r for r in rs if r["band"] not in ("", "NA")]
    v = [float(r["band"]) for r in ok]
    st = [float(r["stripes"]) for r in ok]
    per = "  ".join(f"s{r['seed']}:{r['band']},{r['stripes']}({r['stripes_start']}/{r['stripes_end']})" for r in rs)
    if v:
        print(f"{s:<12}{it:>6}{len(v):>3}  {sum(v)/len(v):>9.2f}{sum(st)/len(st):>13.2f}{min(st):>7.2f}{max(st):>7.2f}   {per}")
    else:
        print(f"{s:<12}{it:>6}{0:>3}  {'NA':>9}{'NA':>13}{'':>7}{'':>7}   {per}")
PYEOF
log "done: $OUT/band.csv ($(($(wc -l <"$OUT/band.csv") - 1)) rows); files: $(ls "$OUT" | tr '\n' ' ')"
