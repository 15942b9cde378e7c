# How far a run folder has trained, from its metrics.jsonl (one JSON object per report, whose
# wall_s restarts with each invocation of `hamgan train`). Source it, then:
#   read -r seconds iteration < <(run_progress RUN)
# seconds: the training time of all its invocations (each one's last wall_s, summed); iteration:
# the last one reported. "0 0" where the run has no metrics.jsonl yet. Parsed by python3's json
# module (the standard library only).

run_progress() {
  python3 - "$1/metrics.jsonl" <<'PY'
import json, os, sys
path = sys.argv[1]
seconds, last_wall, iteration = 0.0, 0.0, 0
if os.path.exists(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                wall, it = float(r["wall_s"]), int(r["iteration"])
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{n}: expected a report with wall_s and iteration ({e})")
            if wall < last_wall:  # a new invocation: the previous one ended at last_wall
                seconds += last_wall
            last_wall, iteration = wall, it
seconds += last_wall
print(f"{seconds:.1f} {iteration}")
PY
}
