"""`hamgan info --json` and the scripts that read it (scripts/lib/machine_facts.sh).

  machine_facts_check.py SOURCE_DIR HAMGAN

The JSON has exactly the documented keys with their types; its CPU facts agree with
/proc/cpuinfo (read here, independently) and follow HAMGAN_CPU_ISA; --threads reaches it. The
shell reader `fact` returns every key's value; `quickstart_ranks` decides the quickstart's ranks
and `quickstart_iterations` its iterations from it, also through a fake `hamgan` whose --version
prints something else entirely (no script decides by --version's prose) and ones whose facts
say there is one GPU, or bf16 or fp32 on the CPU: the preset trains its own iterations in bf16
and the fp32 budget in fp32, another config its own iterations on both. `quickstart_fill_minutes`
tops the preset up to its class's minutes (8 in bf16, 20 in fp32) unless a budget of the user's
own or a decaying rate says otherwise, `quickstart_variety_iterations` names the top-up's cap after
a preset run short of it, and `run_progress` (scripts/lib/run_progress.sh) sums a
run's training time over its invocations from a hand-written metrics.jsonl.
Exits non-zero with the first failed check."""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

root, binary = sys.argv[1], os.path.abspath(sys.argv[2])
lib = os.path.join(root, "scripts/lib/machine_facts.sh")
progress_lib = os.path.join(root, "scripts/lib/run_progress.sh")
KEYS = {"hamgan_version": str, "libtorch_version": str, "cuda_compiled": bool, "cuda_device_count": int,
        "cuda_devices": list, "cpu_isa": str, "cpu_hardware_isa": str, "cpu_isa_cap": (str, type(None)),
        "cpu_amx": bool, "aten_cpu_capability": str, "cpu_bf16_native": bool, "cpu_bf16_accumulates_in_fp32": bool,
        "amp_auto_cpu": str, "amp_auto_cuda": (str, type(None)), "threads": int, "cores": int}
ISAS = ["other", "avx2", "avx512", "avx512_bf16"]


def env_without_cap(**extra):
    env = {k: v for k, v in os.environ.items() if k != "HAMGAN_CPU_ISA"}
    env.update(extra)
    return env


def facts(*args, **env):
    out = subprocess.run([binary, "info", "--json", *args], check=True, capture_output=True, text=True,
                         env=env_without_cap(**env)).stdout
    assert out.count("\n") == 1, f"expected one line, got {out!r}"
    return out, json.loads(out)


def shell(script, **env):
    r = subprocess.run(["bash", "-c", f'set -euo pipefail; source "{lib}"; {script}'], capture_output=True, text=True,
                       env=env_without_cap(**env))
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def hardware_isa():
    """The class of /proc/cpuinfo's flags, as docs/user-guide.md "CPU classes" defines it."""
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^flags\s*:(.*)$", f.read(), re.M)
    flags = set(m.group(1).split()) if m else set()
    if flags & {"avx512_bf16", "amx_bf16"}:
        return "avx512_bf16"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "avx512"
    return "avx2" if {"avx2", "fma"} <= flags else "other"


text, f = facts("--threads", "1")
assert set(f) == set(KEYS), f"keys differ from the documented ones: {sorted(set(f) ^ set(KEYS))}"
for k, t in KEYS.items():
    assert isinstance(f[k], t) and not (t is int and isinstance(f[k], bool)), f"{k}: {f[k]!r} is not {t}"
assert f["threads"] == 1, f
assert f["cuda_device_count"] == len(f["cuda_devices"]), f
for d in f["cuda_devices"]:
    assert set(d) == {"index", "name", "capability_major", "bf16_native", "amp_auto"}, d
    assert d["amp_auto"] == ("bf16" if d["capability_major"] >= 8 else "fp32"), d
assert f["amp_auto_cuda"] == (f["cuda_devices"][0]["amp_auto"] if f["cuda_devices"] else None), f
assert re.fullmatch(r"\d+\.\d+\.\d+", f["libtorch_version"]) and re.fullmatch(r"\d+\.\d+\.\d+", f["hamgan_version"]), f
version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout
assert f"LibTorch {f['libtorch_version']} " in version, (version, f["libtorch_version"])
hw = hardware_isa()
assert f["cpu_hardware_isa"] == hw and f["cpu_isa"] == hw and f["cpu_isa_cap"] is None, (f, hw)
assert f["cpu_bf16_native"] == (hw == "avx512_bf16"), f
assert f["amp_auto_cpu"] == ("bf16" if f["cpu_bf16_native"] else "fp32"), f
if ISAS.index(hw) >= ISAS.index("avx2"):  # capped to AVX2: the fp32 class, as scripts/emulate_cpu.sh does
    _, c = facts(HAMGAN_CPU_ISA="avx2")
    assert (c["cpu_isa"], c["cpu_hardware_isa"], c["cpu_isa_cap"]) == ("avx2", hw, "avx2"), c
    assert not c["cpu_bf16_native"] and c["amp_auto_cpu"] == "fp32" and not c["cpu_amx"], c
bad = subprocess.run([binary, "info", "--json"], capture_output=True, text=True, env=env_without_cap(HAMGAN_CPU_ISA="z80"))
assert bad.returncode != 0 and "HAMGAN_CPU_ISA" in bad.stderr and not bad.stdout, (bad.stdout, bad.stderr)

# The shell reader: every key as the scripts see it.
for k, v in f.items():
    if isinstance(v, list):
        continue
    rc, out, err = shell(f'fact "$FACTS" {k}', FACTS=text)
    want = "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    assert rc == 0 and out == want, (k, rc, out, err, want)
rc, out, err = shell('fact "$FACTS" no_such_key', FACTS=text)
assert rc != 0 and "no_such_key" in err, (rc, out, err)

with tempfile.TemporaryDirectory() as d:
    def fake(name, body):
        path = os.path.join(d, name, "hamgan")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as out:
            out.write("#!/usr/bin/env bash\n" + body)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    # --version says something else entirely; info --json is the real binary's.
    garbage = fake("garbage", 'if [ "${1:-}" = --version ]; then echo "hamgan, 1 CUDA device(s) visible; train.amp auto on the CPU: bf16"; exit 0; fi\n'
                              f'exec "{binary}" "$@"\n')
    gpus = f["cuda_device_count"]
    want_nproc = gpus if 0 < gpus < 2 else 2
    rc, out, err = shell(f'facts=$(machine_facts "{garbage}"); quickstart_ranks "$facts"')
    assert rc == 0 and out == str(want_nproc), (out, err)
    # Facts of a one-GPU machine: one rank unless NPROC says otherwise.
    one_gpu = dict(f, cuda_device_count=1)
    canned_gpu = fake("one_gpu", f"echo '{json.dumps(one_gpu)}'\n")
    for env, want in (({}, "1"), ({"NPROC": "2"}, "2")):
        rc, out, err = shell(f'facts=$(machine_facts "{canned_gpu}"); quickstart_ranks "$facts"', **env)
        assert rc == 0 and out == want, (env, out, err, want)

    # The iterations quickstart.sh trains a config for: the quickstart preset (named by any path)
    # its own train.iterations where the CPU trains in bf16 and 3,300 in fp32; another config its
    # own train.iterations on both; ITERATIONS over all. The configs' values are read here from
    # their YAML, not by hamgan. Each CPU class's facts are canned, and the garbage binary above
    # checks that the decision reads `info --json`, not `--version`, on this machine's own class.
    def yaml_iterations(path):
        with open(path) as src:
            m = re.search(r"^\s+iterations:\s*(\d+)", src.read(), re.M)
        assert m, f"{path}: no train.iterations line"
        return m.group(1)

    preset = os.path.join(root, "configs/fmnist32_quickstart.yaml")
    other = os.path.join(root, "configs/fmnist32_long.yaml")
    preset_its, other_its = yaml_iterations(preset), yaml_iterations(other)
    assert preset_its != "3300" and other_its not in (preset_its, "3300"), \
        "the configs' iterations must differ from each other and from the fp32 budget to tell the cases apart"
    classes = {"bf16": fake("bf16", f"echo '{json.dumps(dict(f, amp_auto_cpu='bf16'))}'\n"),
               "fp32": fake("fp32", f"echo '{json.dumps(dict(f, amp_auto_cpu='fp32'))}'\n"),
               f["amp_auto_cpu"]: garbage}
    for amp, facts_bin in classes.items():
        preset_want = preset_its if amp == "bf16" else "3300"
        cases = ((preset, {}, preset_want),
                 (os.path.join(root, "configs/../configs/fmnist32_quickstart.yaml"), {}, preset_want),
                 (other, {}, other_its), (other, {"ITERATIONS": "10"}, "10"), (preset, {"ITERATIONS": "12"}, "12"))
        for config, env, want in cases:
            rc, out, err = shell(f'facts=$(machine_facts "{facts_bin}"); '
                                 f'quickstart_iterations "$facts" "{binary}" "{config}"', **env)
            assert rc == 0 and out == want, (amp, config, env, out, err, want)
    if ISAS.index(hw) >= ISAS.index("avx2"):  # capped to AVX2, the real binary trains in fp32
        rc, out, err = shell(f'facts=$(machine_facts "{garbage}"); quickstart_iterations "$facts" "{binary}" "{preset}"',
                             HAMGAN_CPU_ISA="avx2")
        assert rc == 0 and out == "3300", (out, err)

    # The minutes the quickstart tops its iterations up to: the class's for the preset alone;
    # none where the user's ITERATIONS, MINUTES or a budget key override asks for a budget of its
    # own, or where the rates decay (the schedule would start again); FILL_MINUTES over the rest.
    for amp, facts_bin in classes.items():
        minutes = "8" if amp == "bf16" else "20"
        cases = ((preset, [], {}, minutes), (preset, ["train.seed=3"], {}, minutes),
                 (os.path.join(root, "configs/../configs/fmnist32_quickstart.yaml"), [], {}, minutes),
                 (other, [], {}, "0"), (preset, [], {"ITERATIONS": "12"}, "0"), (preset, [], {"MINUTES": "5"}, "0"),
                 (preset, ["train.iterations=9"], {}, "0"), (preset, ["train.time_limit_minutes=2"], {}, "0"),
                 (preset, ["train.lr_decay=linear"], {}, "0"), (preset, [], {"FILL_MINUTES": "3"}, "3"),
                 (other, [], {"FILL_MINUTES": "3"}, "3"), (preset, [], {"FILL_MINUTES": "0"}, "0"),
                 (preset, ["train.lr_decay=linear"], {"FILL_MINUTES": "3"}, "0"),
                 (preset, ["train.iterations=9"], {"FILL_MINUTES": "3"}, "0"))
        for config, overrides, env, want in cases:
            rc, out, err = shell(f'facts=$(machine_facts "{facts_bin}"); '
                                 f'quickstart_fill_minutes "$facts" "{binary}" "{config}" {" ".join(overrides)}', **env)
            assert rc == 0 and out == want, (amp, config, overrides, env, out, err, want)
    for bad in ("abc", "-1", "2m", "1e3"):
        rc, out, err = shell(f'facts=$(machine_facts "{garbage}"); quickstart_fill_minutes "$facts" "{binary}" "{preset}"',
                             FILL_MINUTES=bad)
        assert rc != 0 and not out and f"FILL_MINUTES='{bad}'" in err and "number >= 0" in err, (bad, rc, out, err)

    # The iterations the quickstart names after a run short of them: the top-up's cap, for the
    # preset alone (by any path), and only where the run trained some but fewer.
    cap = re.search(r"^quickstart_fill_iterations=(\d+)$", open(lib).read(), re.M).group(1)
    via = os.path.join(root, "configs/../configs/fmnist32_quickstart.yaml")
    for config, reached, want in ((preset, 3300, cap), (via, int(cap) - 1, cap), (preset, int(cap), ""),
                                  (preset, int(cap) + 500, ""), (preset, 0, ""), (other, 3300, "")):
        rc, out, err = shell(f'quickstart_variety_iterations "{config}" {reached}')
        assert rc == 0 and out == want, (config, reached, out, err, want)

    # A run's training time over its invocations: wall_s restarts with each one (the second
    # line's 0.5 after the first's 10.0, the fourth's 1.0 after 5.5), so 10.0 + 5.5 + 4.0.
    def progress(run):
        r = subprocess.run(["bash", "-c", f'set -euo pipefail; source "{progress_lib}"; run_progress "{run}"'],
                           capture_output=True, text=True)
        return r.returncode, r.stdout.strip(), r.stderr.strip()

    run = os.path.join(d, "run")
    os.makedirs(run)
    assert progress(run) == (0, "0.0 0", ""), progress(run)  # not started: no metrics.jsonl
    reports = [(25, 10.0), (26, 0.5), (50, 5.5), (51, 1.0), (75, 4.0)]
    with open(os.path.join(run, "metrics.jsonl"), "w") as out:
        for it, wall in reports:
            out.write(json.dumps({"iteration": it, "wall_s": wall, "d_loss": 1.5, "it_s": 9.0}) + "\n")
    assert progress(run) == (0, "19.5 75", ""), progress(run)
    with open(os.path.join(run, "metrics.jsonl"), "a") as out:
        out.write('{"iteration": 76}\n')
    rc, out, err = progress(run)
    assert rc != 0 and "metrics.jsonl:6" in err and "wall_s" in err and not out, (rc, out, err)

# No script decides by --version's prose (printing it for the reader is fine).
for dirpath, _, names in os.walk(os.path.join(root, "scripts")):
    for n in names:
        if n.endswith(".sh"):
            with open(os.path.join(dirpath, n)) as src:
                hit = re.search(r"hamgan\"? --version[^\n]*\|\s*(grep|sed|awk|cut)", src.read())
            assert not hit, f"scripts/{n} decides by `--version`: read `hamgan info --json` " \
                            f"(scripts/lib/machine_facts.sh): {hit.group(0)}"
print("machine_facts: ok")
