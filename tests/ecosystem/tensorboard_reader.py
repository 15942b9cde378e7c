#!/usr/bin/env python3
"""TensorBoard itself reads a training run's event files (io/tensorboard_log.h): a tiny
Fashion-MNIST run with in-training scores, killed with SIGKILL after it wrote past its last
checkpoint, then resumed to the end. TensorBoard's EventAccumulator (and the plugin accumulator
its server uses) must then show, on one step axis:

- every metrics.jsonl scalar as train/<key>, at exactly the iterations of the rows that stand,
  which are the file's own once the resume has cut it (the killed session's rows up to the
  checkpoint the resume started from, then the resumed session's), none twice, none missing,
  steps strictly increasing; each value the row's within half a unit of its last printed digit
  plus one float32 ulp (TensorBoard's simple_value is a float32; the row is printed with %.9g or
  fixed decimals);
- every score of the run's table (scores.csv, gan/eval/score_table.h) as eval/<column> at the
  row's iteration, within one float32 ulp plus half a unit of the last digit the table prints;
- every sample grid PNG as the image `samples` at its iteration: decodable, of the grid's size
  and pixel for pixel the grid file on disk (written last by the resumed session);
- in the run tensorboard/real_test, the real test images' row (real_scores.csv) under the same
  eval/<column> tags at every scored iteration: the flat line beside the samples'.

Then a run trained without scoring, scored by `hamgan fid --run` (a process of its own), trained
on and scored again: the same eval/<column> series in TensorBoard's view of the run, each
iteration once, and the same real line.

The interpreter must have the tensorboard package: a missing one is a failure, never a skip.

Usage: tensorboard_reader.py SOURCE_DIR HAMGAN_BINARY WORK_DIR
"""
import decimal
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

try:
    import numpy as np
    from PIL import Image
    from tensorboard.backend.event_processing import event_accumulator, event_file_loader
    from tensorboard.backend.event_processing import plugin_event_accumulator
except ImportError as e:
    sys.exit(f"tensorboard_reader: FAILED: {sys.executable} lacks a package this oracle needs ({e}); "
             "use an interpreter with tensorboard, numpy and PIL (scripts/setup.sh makes "
             "~/.cache/hamgan/oracle-venv; CMake's HAMGAN_ECOSYSTEM_PYTHON names it)")

ITERATIONS, LOG_EVERY, SAMPLE_EVERY, CHECKPOINT_EVERY, EVAL_EVERY = 40, 4, 6, 15, 15
KILL_AT = 22  # the first metrics row at or past this, which is past checkpoint 15: SIGKILL


def fail(msg):
    sys.exit(f"tensorboard_reader: FAILED: {msg}")


def check(cond, msg):
    if not cond:
        fail(msg)


def rows(path):
    """metrics.jsonl rows as {key: (value, half unit of its last printed digit)}."""
    out = []
    for line in open(path):
        r = json.loads(line, parse_float=lambda s: (float(s), 0.5 * 10.0 ** decimal.Decimal(s).as_tuple().exponent))
        out.append({k: v if isinstance(v, tuple) else (float(v), 0.5) for k, v in r.items()})
    return out


def f32_close(got, want, half_unit):
    return abs(float(got) - want) <= half_unit + float(np.spacing(np.float32(abs(want))))


def read_table(path):
    """A score table (gan/eval/score_table.h): header, rows."""
    csv = [line.rstrip("\n").split(",") for line in open(path)]
    return csv[0], csv[1:]


def check_series(acc, tags, header, body, where):
    """Each metric column of the table's rows as eval/<column> at the rows' iterations, in order,
    once each, within one float32 ulp plus half a unit of the last digit the table prints; no
    eval/ tag the table has no column for. Returns the values compared."""
    score_cols = [c for c in header if c not in ("iteration", "n", "seconds", "features")]
    n = 0
    for c in score_cols:
        want = {int(r[0]): r[header.index(c)] for r in body}
        want = {it: v for it, v in want.items() if v not in ("", "nan") and np.isfinite(float(v))}
        got = acc.Scalars("eval/" + c) if "eval/" + c in tags["scalars"] else []
        steps = [e.step for e in got]
        check(steps == sorted(want), f"{where} eval/{c}: TensorBoard's steps {steps} != {sorted(want)}")
        for e in got:
            v = want[e.step]
            half = 0.5 * 10.0 ** decimal.Decimal(v).as_tuple().exponent  # of the last digit printed
            check(f32_close(e.value, float(v), half), f"{where} eval/{c} at {e.step}: TensorBoard {e.value}, table {v}")
            n += 1
    extra = {t for t in tags["scalars"] if t.startswith("eval/")} - {"eval/" + c for c in score_cols}
    check(not extra, f"{where}: TensorBoard has scores {sorted(extra)} that the table has no column for")
    return n


def check_scores(run, tb, acc):
    """scores.csv's rows in the run's events (acc), and real_scores.csv's row in
    tb/real_test at every scored iteration. Returns the scored iterations and the values compared."""
    header, body = read_table(os.path.join(run, "scores.csv"))
    scored = sorted(int(r[0]) for r in body)
    n = check_series(acc, acc.Tags(), header, body, "scores.csv")
    real_csv = os.path.join(run, "real_scores.csv")
    check(os.path.exists(real_csv), f"no {real_csv}: the data source's test split was not scored")
    rh, rb = read_table(real_csv)
    check(len(rb) == 1, f"{real_csv}: expected one row, got {len(rb)}")
    line = [[str(it)] + rb[0][1:] for it in scored]  # the real row at every scored iteration
    check(os.path.isdir(os.path.join(tb, "real_test")), f"no {tb}/real_test: the real line is missing")
    real = event_accumulator.EventAccumulator(os.path.join(tb, "real_test"),
                                              size_guidance={event_accumulator.SCALARS: 0})
    real.Reload()
    n += check_series(real, real.Tags(), rh, line, "real_test")
    return scored, n


def score_run_by_fid(src, binary, work, clf, env):
    """A run trained with no scorer, then scored, trained on and scored again by `hamgan fid
    --run`; then that run with no scores in TensorBoard (its events files lost), scored again by
    `fid --run` and then by scoring while training."""
    run = os.path.join(work, "run_fid")
    tb = os.path.join(run, "tensorboard")
    cfg = os.path.join(src, "configs", "fmnist32_quickstart.yaml")
    data = subprocess.run([binary, "info", "--config", cfg, "--get", "data.path"], check=True, env=env,
                          stdout=subprocess.PIPE, text=True).stdout.strip()

    def train(iterations, *scoring):
        subprocess.run([binary, "train", "-c", cfg, "--out", run, "--threads", "1", "--workers", "1",
                        f"train.iterations={iterations}", "train.log_every=5", "train.sample_every=0",
                        "train.checkpoint_every=10", "train.ema_start=5", *scoring],
                       check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def fid():
        out = subprocess.run([binary, "fid", "--real", data, "--run", run, "--features", clf, "-n", "20",
                              "--metrics", "fid,recall,coverage,class_acc"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(out.returncode == 0, f"fid --run failed (exit {out.returncode}):\n{out.stdout[-3000:]}")

    def series(want):
        acc = event_accumulator.EventAccumulator(tb, size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        scored, n = check_scores(run, tb, acc)
        check(scored == want, f"fid --run: scored {scored}, expected {want}")
        # fid's events leave training's standing: every metrics.jsonl row once.
        its = [int(r["iteration"][0]) for r in rows(os.path.join(run, "metrics.jsonl"))]
        steps = [e.step for e in acc.Scalars("train/d_loss")]
        check(steps == its, f"fid --run: train/d_loss's steps {steps} != metrics.jsonl's {its}")
        return n

    train_files = set()

    def event_files():
        return set(glob.glob(os.path.join(tb, "events.out.tfevents.*")))

    def train_on(iterations, *scoring):  # and remember the files the training session made
        before = event_files()
        train(iterations, *scoring)
        train_files.update(event_files() - before)

    def forget_real_line():  # as a run scored before the real line existed
        os.remove(os.path.join(run, "real_scores.csv"))
        shutil.rmtree(os.path.join(tb, "real_test"))

    train_on(20)
    fid()
    series([10, 20])
    train_on(30)  # a new session (its restart marker at 21) keeps the scores of 10 and 20
    forget_real_line()
    fid()  # scores 30, and draws the real line at 10 and 20 too
    series([10, 20, 30])
    # A run whose scores' events files were lost: fid --run adds the rows the view lacks, and the
    # real line from real_scores.csv.
    def forget_scores():
        check(len(train_files) >= 2, f"expected one events file per training session, got {sorted(train_files)}")
        for f in event_files() - train_files:
            os.remove(f)
        shutil.rmtree(os.path.join(tb, "real_test"))

    forget_scores()
    fid()
    n = series([10, 20, 30])
    # The same, then trained on with scoring while training: its first score adds the rows before.
    forget_scores()
    train_on(40, "eval.every=10", f"eval.features={clf}", "eval.n=20", "eval.metrics=fid,recall,coverage,class_acc")
    return n + series([10, 20, 30, 40])


def main():
    src, binary, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = os.path.join(work, "run")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    clf = os.path.join(work, "clf.pt")
    cfg = os.path.join(src, "configs", "fmnist32_quickstart.yaml")
    subprocess.run([binary, "classifier", "train", "-c", cfg, "--out", clf, "--steps", "30", "--batch", "64",
                    "--width", "4", "--feature-dim", "16", "--threads", "1", "--workers", "1"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    cmd = [binary, "train", "-c", cfg, "--out", run, "--threads", "1", "--workers", "1",
           f"train.iterations={ITERATIONS}", f"train.log_every={LOG_EVERY}", f"train.sample_every={SAMPLE_EVERY}",
           f"train.checkpoint_every={CHECKPOINT_EVERY}", f"eval.every={EVAL_EVERY}", "eval.n=20",
           f"eval.features={clf}", "eval.metrics=fid,kid", "train.ema_start=5"]

    # Session 1, killed (SIGKILL: nothing of the process runs afterwards) once it logged past
    # its checkpoint at 15.
    log1 = open(os.path.join(work, "session1.log"), "w")
    p = subprocess.Popen(cmd, env=env, stdout=log1, stderr=subprocess.STDOUT)
    metrics = os.path.join(run, "metrics.jsonl")
    deadline = time.time() + 600
    while True:
        check(p.poll() is None, f"session 1 ended (exit {p.returncode}) before iteration {KILL_AT}; see {log1.name}")
        check(time.time() < deadline, "session 1 did not reach iteration %d in 10 min" % KILL_AT)
        if os.path.exists(metrics) and any(r["iteration"][0] >= KILL_AT for r in rows(metrics)):
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    session1 = rows(metrics)

    # Session 2: resumes from the newest checkpoint and finishes.
    out2 = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    open(os.path.join(work, "session2.log"), "w").write(out2.stdout)
    check(out2.returncode == 0, f"the resumed session failed (exit {out2.returncode}):\n{out2.stdout[-3000:]}")
    m = re.search(r"resuming from \S+ \(iteration (\d+)\)", out2.stdout)
    check(m, "the second session did not resume:\n" + out2.stdout[-2000:])
    resumed = int(m.group(1))
    check(session1[-1]["iteration"][0] > resumed,
          f"the kill left nothing past checkpoint {resumed} (last row {session1[-1]['iteration'][0]}): "
          "the purge of orphaned events was not exercised")
    # What stands, and all that metrics.jsonl now holds (the resumed session cut the killed one's
    # rows past its checkpoint): the killed session's rows up to it, then the resumed session's.
    all_rows = rows(metrics)
    kept = [r for r in session1 if r["iteration"][0] <= resumed]
    check(all_rows[:len(kept)] == kept, "metrics.jsonl lost or changed the killed session's rows up to its checkpoint")
    check(all(r["iteration"][0] > resumed for r in all_rows[len(kept):]),
          f"metrics.jsonl still holds the killed session's rows past checkpoint {resumed}")
    expected = all_rows
    its = [int(r["iteration"][0]) for r in expected]
    check(its == sorted(set(its)), f"metrics.jsonl's standing rows are not strictly increasing: {its}")

    tb = os.path.join(run, "tensorboard")
    files = sorted(glob.glob(os.path.join(tb, "events.out.tfevents.*")))
    check(len(files) == 2, f"expected one events file per session in {tb}, found {files}")
    # Every record of both files parses (the killed session's too), and each file begins with
    # its version and its START at the first step it writes.
    for f, first in zip(files, [1, resumed + 1]):
        events = list(event_file_loader.LegacyEventFileLoader(f).Load())
        check(events and events[0].file_version == "brain.Event:2", f"{f}: no file_version event first")
        check(len(events) > 1 and events[1].HasField("session_log") and events[1].session_log.status == 1
              and events[1].step == first, f"{f}: expected SessionLog START at step {first}, got {events[1]}")

    acc = event_accumulator.EventAccumulator(tb, size_guidance={event_accumulator.SCALARS: 0,
                                                                event_accumulator.IMAGES: 0})
    acc.Reload()
    tags = acc.Tags()
    keys = [k for k in expected[0] if k != "iteration"]
    want_tags = {"train/" + k for k in keys}
    train_tags = {t for t in tags["scalars"] if t.startswith("train/")}
    check(train_tags == want_tags, f"train scalars: TensorBoard has {sorted(train_tags)}, metrics.jsonl {sorted(want_tags)}")
    n_values = 0
    for k in keys:
        got = acc.Scalars("train/" + k)
        steps = [e.step for e in got]
        check(steps == its, f"train/{k}: TensorBoard's steps {steps} != metrics.jsonl's standing iterations {its}")
        for e, r in zip(got, expected):
            check(f32_close(e.value, *r[k]), f"train/{k} at {e.step}: TensorBoard {e.value}, metrics.jsonl {r[k][0]}")
            n_values += 1

    # Scores: the table holds one row per scored iteration (resumed sessions replace or fill).
    scored, n_scores = check_scores(run, tb, acc)
    check(len(scored) >= 3, f"expected scores at 15, 30 and 40, got {scored}")
    check(n_scores >= 3 * 2, f"expected at least fid and class accuracy at 3 iterations, got {n_scores} values")

    # Sample grids: the grid files on disk, each written last by the session TensorBoard shows.
    grids = {int(re.search(r"(\d+)\.png$", f).group(1)): f for f in glob.glob(os.path.join(run, "samples", "*.png"))}
    check(tags["images"] == ["samples"], f"images: expected the tag 'samples', got {tags['images']}")
    imgs = acc.Images("samples")
    check([e.step for e in imgs] == sorted(grids),
          f"samples: TensorBoard's steps {[e.step for e in imgs]} != the grids' {sorted(grids)}")
    for e in imgs:
        im = Image.open(io.BytesIO(e.encoded_image_string))
        disk = Image.open(grids[e.step])
        check(im.size == (e.width, e.height) == disk.size, f"samples at {e.step}: size {im.size}, "
              f"summary {e.width}x{e.height}, file {disk.size}")
        check(np.array_equal(np.asarray(im), np.asarray(disk)), f"samples at {e.step}: pixels differ from {grids[e.step]}")

    # TensorBoard's server reads through the plugin accumulator (data_compat turns simple_value
    # into tensors): the same steps there.
    pacc = plugin_event_accumulator.EventAccumulator(tb, size_guidance={plugin_event_accumulator.TENSORS: 0})
    pacc.Reload()
    for k in keys:
        steps = [e.step for e in pacc.Tensors("train/" + k)]
        check(steps == its, f"plugin accumulator train/{k}: steps {steps} != {its}")

    n_fid = score_run_by_fid(src, binary, work, clf, env)

    print(f"tensorboard_reader: ok: killed at row {session1[-1]['iteration'][0]}, resumed from {resumed}; "
          f"{len(keys)} train scalars x {len(its)} steps ({n_values} values), {n_scores} scores at {scored}, "
          f"{len(imgs)} grids at {sorted(grids)}; fid --run's scores and real line: {n_fid} values")


if __name__ == "__main__":
    main()
