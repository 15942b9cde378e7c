# Machine facts for scripts, from `hamgan info --json` (keys: docs/user-guide.md "Machine
# facts"), never from the prose of `hamgan --version`. Source it, then:
#   facts=$(machine_facts BIN)          # the JSON object, once
#   fact "$facts" KEY                   # one value: true/false, a number, a string; "null"
#   quickstart_budget "$facts"          # "ITERATIONS NPROC" of scripts/quickstart.sh
#   quickstart_iterations BUDGET BIN CONFIG   # the iterations it trains CONFIG for
# Parsed by python3's json module (the standard library only).

machine_facts() {
  "$1" info --json
}

fact() {
  python3 -c '
import json, sys
facts = json.loads(sys.argv[1])
if sys.argv[2] not in facts:
    sys.exit(f"machine facts: no key {sys.argv[2]!r} in `hamgan info --json` (keys: {sorted(facts)})")
v = facts[sys.argv[2]]
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$1" "$2"
}

# The quickstart's budget by CPU class (docs/user-guide.md "CPU classes"; measured in
# docs/results/quickstart/): the iterations only, the model is the same everywhere. 5,000 where
# `train.amp: auto` is bf16 on the CPU (native bf16: about 8 minutes on 2 cores of an AVX-512
# BF16 CPU), 3,300 in fp32 (AVX2: the same time as 5,000 in bf16 under scripts/emulate_cpu.sh
# avx2, about 20 minutes on 2 cores of a real AVX2 CPU, estimated). Ranks: NPROC, else 2
# data-parallel ranks of one thread, but at most one per GPU where there are GPUs (train.device
# auto trains there). ITERATIONS overrides the budget.
quickstart_budget() {
  local facts=$1 iterations nproc gpus
  if [ "$(fact "$facts" amp_auto_cpu)" = bf16 ]; then iterations=${ITERATIONS:-5000}; else iterations=${ITERATIONS:-3300}; fi
  nproc=${NPROC:-2}
  gpus=$(fact "$facts" cuda_device_count)
  if [ -z "${NPROC:-}" ] && [ "$gpus" -gt 0 ] && [ "$gpus" -lt "$nproc" ]; then nproc=$gpus; fi
  echo "$iterations $nproc"
}

# The iterations scripts/quickstart.sh trains CONFIG for, given BUDGET, the first field of
# quickstart_budget: that budget is the quickstart preset's, measured for its model, so it applies
# to that preset (or wherever ITERATIONS set it); any other CONFIG trains its own train.iterations.
quickstart_iterations() {
  local budget=$1 bin=$2 config=$3 preset
  preset=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../configs/fmnist32_quickstart.yaml")
  if [ -n "${ITERATIONS:-}" ] || [ "$(realpath "$config")" = "$preset" ]; then
    echo "$budget"
  else
    "$bin" info --config "$config" --get train.iterations
  fi
}
