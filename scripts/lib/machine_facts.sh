# Machine facts for scripts, from `hamgan info --json` (keys: docs/user-guide.md "Machine
# facts"), never from the prose of `hamgan --version`. Source it, then:
#   facts=$(machine_facts BIN)          # the JSON object, once
#   fact "$facts" KEY                   # one value: true/false, a number, a string; "null"
#   quickstart_ranks "$facts"           # the ranks (NPROC) of scripts/quickstart.sh
#   quickstart_iterations "$facts" BIN CONFIG   # the iterations it trains CONFIG for
#   quickstart_fill_minutes "$facts" BIN CONFIG [KEY=VALUE...]   # the minutes they are topped up to
#   quickstart_variety_iterations CONFIG REACHED   # the iterations to name after a shorter run
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

# Whether CONFIG is the quickstart preset, by any path to it.
quickstart_is_preset() {
  [ "$(realpath "$1")" = "$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../configs/fmnist32_quickstart.yaml")" ]
}

# The quickstart's ranks: NPROC, else 2 data-parallel ranks of one thread, but at most one per
# GPU where there are GPUs (train.device auto trains there).
quickstart_ranks() {
  local facts=$1 nproc gpus
  nproc=${NPROC:-2}
  gpus=$(fact "$facts" cuda_device_count)
  if [ -z "${NPROC:-}" ] && [ "$gpus" -gt 0 ] && [ "$gpus" -lt "$nproc" ]; then nproc=$gpus; fi
  echo "$nproc"
}

# The iterations scripts/quickstart.sh trains CONFIG for: ITERATIONS where set, else CONFIG's own
# train.iterations, except the quickstart preset where `train.amp: auto` is fp32 on the CPU. The
# preset's own 5,000 are its budget in bf16 (native bf16: about 8 minutes on 2 cores of an AVX-512
# BF16 CPU); in fp32 (AVX2) it trains 3,300, the same time under scripts/emulate_cpu.sh avx2
# (docs/user-guide.md "CPU classes"; measured in docs/results/quickstart/). Another config was
# not measured for the classes, so it trains its own iterations on both.
quickstart_fp32_iterations=3300
quickstart_iterations() {
  local facts=$1 bin=$2 config=$3
  if [ -n "${ITERATIONS:-}" ]; then
    echo "$ITERATIONS"
  elif quickstart_is_preset "$config" && [ "$(fact "$facts" amp_auto_cpu)" != bf16 ]; then
    echo "$quickstart_fp32_iterations"
  else
    "$bin" info --config "$config" --get train.iterations
  fi
}

# The quickstart's wall-clock budget by CPU class, which its iterations are topped up to where
# they take less (scripts/quickstart.sh; a faster CPU of the class): 8 minutes in bf16, what the
# 5,000 iterations took on the slower of the two 2-core AVX-512 BF16 EPYCs measured, and 20 in
# fp32, the estimate for 3,300 on a 2-core AVX2 CPU (docs/results/quickstart/variety/). The
# top-up trains on at the same constant rates up to quickstart_fill_iterations: in bf16 every
# seed measured on both EPYCs reached the variety that the class's iterations fall short of at
# 7,500 and at 8,000 (and one seed at every checkpoint to 10,000). 0 (no top-up) where
# the rates decay (the schedule would start again) or a train.iterations= or
# train.time_limit_minutes= override sets a budget of its own; else FILL_MINUTES where set; else
# 0 where ITERATIONS or MINUTES asks for a budget of its own, or for another config, which was
# not measured for it.
quickstart_fill_iterations=8000
quickstart_fill_minutes() {
  local facts=$1 bin=$2 config=$3 kv
  shift 3
  for kv in "$@"; do
    case $kv in train.iterations=* | train.time_limit_minutes=*) echo 0; return ;; esac
  done
  if [ "$("$bin" info --config "$config" --get train.lr_decay "$@")" != none ]; then
    echo 0
  elif [ -n "${FILL_MINUTES:-}" ]; then
    if ! [[ $FILL_MINUTES =~ ^[0-9]+([.][0-9]+)?$ ]]; then
      echo "FILL_MINUTES='$FILL_MINUTES': expected the minutes to top the iterations up to, a number >= 0 (0: none)" >&2
      return 1
    fi
    echo "$FILL_MINUTES"
  elif [ -n "${ITERATIONS:-}" ] || [ -n "${MINUTES:-}" ] || ! quickstart_is_preset "$config"; then
    echo 0
  elif [ "$(fact "$facts" amp_auto_cpu)" = bf16 ]; then
    echo 8
  else
    echo 20
  fi
}

# The iterations to name after a quickstart run of CONFIG that reached REACHED (> 0): for the
# preset short of quickstart_fill_iterations (a slower CPU of its class, AVX2's 3,300, MINUTES),
# those, at which every seed measured on both CPU classes printed recall >= 0.5 and coverage
# >= 0.8 in the classifier's features (docs/results/quickstart/variety/); else nothing.
quickstart_variety_iterations() {
  local config=$1 reached=$2
  if quickstart_is_preset "$config" && [ "$reached" -gt 0 ] && [ "$reached" -lt "$quickstart_fill_iterations" ]; then
    echo "$quickstart_fill_iterations"
  fi
}
