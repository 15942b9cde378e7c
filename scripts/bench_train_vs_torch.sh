#!/usr/bin/env bash
# `hamgan bench train` side by side with the same model in plain PyTorch, eager and
# torch.compile (scripts/bench_torch_eager.py): SAGAN-32, ch 32, batch 64, n_dis 1, hinge, Adam,
# with the context module none / self_attention / ham_nmf in G (32x32) and D (16x16). Both sides
# get the same precision and layout policy (bf16 autocast where the CPU has native bf16, after
# HAMGAN_CPU_ISA's cap; channels-last), so the ratios compare implementations, not policies.
# For each module the three runs follow each other, so a shared machine's load hits them alike;
# REPEAT rounds repeat the whole set, and the closing markdown table takes the median images/s.
#   scripts/bench_train_vs_torch.sh    THREADS (default 2), ITERS (default 10), MODULES (default
#                                      none,self_attention,ham_nmf), REPEAT (default 1),
#                                      BUILD_DIR (default build), COMPILE=0 skips torch.compile,
#                                      TORCH2_PY (a Python with torch >= 2 and numpy, default
#                                      ~/.cache/hamgan/torch2-venv/bin/python), REUSE_FAKE=1:
#                                      both sides' G step reuses the D step's fakes
#                                      (train.reuse_fake; default: BigGAN's fresh draw)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${THREADS:-2}
iters=${ITERS:-10}
modules=${MODULES:-none,self_attention,ham_nmf}
build=${BUILD_DIR:-build}
compile=${COMPILE:-1}
py=${TORCH2_PY:-$HOME/.cache/hamgan/torch2-venv/bin/python}
[ -x "$py" ] || { echo "TORCH2_PY=$py: not found (a Python with torch >= 2 and numpy)" >&2; exit 1; }
[ -x "$build/hamgan" ] || { echo "$build/hamgan: not found (BUILD_DIR)" >&2; exit 1; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: *//')
echo "CPU: $cpu${HAMGAN_CPU_ISA:+, HAMGAN_CPU_ISA=$HAMGAN_CPU_ISA}, torch $("$py" -c 'import torch; print(torch.__version__)'), $threads threads"

reuse=()
hreuse=()
if [ "${REUSE_FAKE:-0}" = 1 ]; then reuse=(--reuse-fake); hreuse=(train.reuse_fake=true); fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# run TAG MODULE COMMAND...: the command's JSON object (stdout; its text goes to stderr), shown
# and kept for the table as TAG<tab>MODULE<tab>JSON; a failed run is reported and leaves its cell
# empty rather than ending the whole set.
run() {
  local tag=$1 m=$2 json
  shift 2
  if json=$("$@"); then
    echo "$tag $m: $json"
    printf '%s\t%s\t%s\n' "$tag" "$m" "$json" >>"$log"
  else
    echo "$tag $m: FAILED (exit $?)"
  fi
}
for round in $(seq "${REPEAT:-1}"); do
  for m in ${modules//,/ }; do
    run eager "$m" "$py" scripts/bench_torch_eager.py --context "$m" --threads "$threads" \
      --iters "$iters" --warmup 2 --amp auto --channels-last "${reuse[@]}" --json
    if [ "$compile" != 0 ]; then
      run compile "$m" "$py" scripts/bench_torch_eager.py --context "$m" --threads "$threads" \
        --iters "$iters" --warmup 2 --amp auto --channels-last --compile "${reuse[@]}" --json
    fi
    run hamgan "$m" "$build/hamgan" bench train --config configs/fmnist32_sagan.yaml \
      --threads "$threads" --iters "$iters" --warmup 2 generator.context.type="$m" \
      discriminator.context.type="$m" "${hreuse[@]}" --json
  done
done

# The images_per_s of each run's JSON, median over the rounds.
echo
python3 - "$log" "$modules" <<'PY'
import json, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    tag, module, obj = line.rstrip("\n").split("\t", 2)
    vals.setdefault((tag, module), []).append(json.loads(obj)["images_per_s"])
def median(tag, module):
    v = vals.get((tag, module))
    return statistics.median(v) if v else None
def cell(x):
    return "-" if x is None else f"{x:.1f}"
def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"
print("| module | hamgan img/s | eager img/s | compile img/s | hamgan/eager | hamgan/compile |")
print("|---|---:|---:|---:|---:|---:|")
for m in sys.argv[2].split(","):
    h, e, c = median("hamgan", m), median("eager", m), median("compile", m)
    print(f"| {m} | {cell(h)} | {cell(e)} | {cell(c)} | {ratio(h, e)} | {ratio(h, c)} |")
PY
