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
# run TAG MODULE COMMAND...: the command's output prefixed with "TAG MODULE:", kept for the
# table; a failed run is reported and leaves its cell empty rather than ending the whole set.
run() {
  local tag=$1 m=$2
  shift 2
  "$@" | sed -u "s/^/$tag $m: /" | tee -a "$log" || echo "$tag $m: FAILED (exit ${PIPESTATUS[0]})" | tee -a "$log"
}
for round in $(seq "${REPEAT:-1}"); do
  for m in ${modules//,/ }; do
    run eager "$m" "$py" scripts/bench_torch_eager.py --context "$m" --threads "$threads" \
      --iters "$iters" --warmup 2 --amp auto --channels-last "${reuse[@]}"
    if [ "$compile" != 0 ]; then
      run compile "$m" "$py" scripts/bench_torch_eager.py --context "$m" --threads "$threads" \
        --iters "$iters" --warmup 2 --amp auto --channels-last --compile "${reuse[@]}"
    fi
    run hamgan "$m" "$build/hamgan" bench train --config configs/fmnist32_sagan.yaml \
      --threads "$threads" --iters "$iters" --warmup 2 generator.context.type="$m" \
      discriminator.context.type="$m" "${hreuse[@]}" --json
  done
done

# The images/s figure of each result line (hamgan's JSON "images_per_s", the eager script's
# "..., 1234.5 images/s"), median over the rounds.
echo
awk -v modules="$modules" '
  function median(s,   v, n, i, j, t) {
    n = split(s, v, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "-" }
  function cell(x) { return x == "" ? "-" : sprintf("%.1f", x) }
  match($0, /"images_per_s": [0-9.eE+-]+/) {
    m = $2; sub(/:$/, "", m)
    vals[$1, m] = vals[$1, m] " " substr($0, RSTART + 16, RLENGTH - 16)
    next
  }
  {
    for (i = 2; i <= NF; i++)
      if ($i == "images/s") { m = $2; sub(/:$/, "", m); vals[$1, m] = vals[$1, m] " " $(i - 1) }
  }
  END {
    print "| module | hamgan img/s | eager img/s | compile img/s | hamgan/eager | hamgan/compile |"
    print "|---|---:|---:|---:|---:|---:|"
    n = split(modules, mods, ",")
    for (k = 1; k <= n; k++) {
      m = mods[k]
      h = median(vals["hamgan", m]); e = median(vals["eager", m]); c = median(vals["compile", m])
      printf "| %s | %s | %s | %s | %s | %s |\n", m, cell(h), cell(e), cell(c), ratio(h, e), ratio(h, c)
    }
  }' "$log"
