#!/usr/bin/env python3
"""Checker for tests/test_export.cpp's hand-edit cases: hamgan_py.load_generator refuses every
export directory the exporter did not write as it is, naming the files, before allocating.

Arguments: two `hamgan export` directories A and B of the same architecture (a ham_nmf G, two
checkpoints), and a scratch directory. Each case copies A (and B) into the scratch directory,
edits it, and expects ExportError with the listed parts in its message:
  - config.json with another Hamburger type: refused by the config_sha256 binding;
  - B's model.safetensors under A's config.json: refused by the binding;
  - a key removed from config.json: the key and the file named;
  - a huge channel count (a 512 TB linear weight): refused in under MAX_SECONDS, unbound by the
    binding, and re-bound (a digest that matches the edit) by the shape comparison against the
    header, never by an allocation;
  - an export without the digest (an older hamgan): refused, asking for a new export;
  - z_dim past hamgan's range, re-bound: refused by the range, before a latent is drawn;
  - config.json or a safetensors header nested past Python's stack: ExportError, not RecursionError.
Where the binding refuses, the same edit re-bound must load (or fail on shapes): the binding,
not something else, is what refused it.
"""
import hashlib
import os
import resource
import shutil
import sys
import time

MAX_SECONDS = 10.0
# The load may grow the process by this much at most: the edited config describes terabytes.
MAX_RSS_GROWTH_MB = 500


def main():
    a, b, scratch = sys.argv[1:4]
    try:
        import torch
        from safetensors import safe_open
        from safetensors.torch import load_file, save_file
        import hamgan_py
    except ImportError as e:
        sys.exit(f"check_export_edits: {sys.executable} lacks a package the check needs ({e})")
    torch.set_num_threads(1)
    failures = []

    def copy(src, name, model_from=None):
        d = os.path.join(scratch, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d)
        if model_from:
            shutil.copyfile(os.path.join(model_from, "model.safetensors"), os.path.join(d, "model.safetensors"))
        return d

    def edit_config(d, old, new, times=1):
        p = os.path.join(d, "config.json")
        text = open(p, encoding="utf-8").read()
        if text.count(old) != times:
            failures.append(f"{p}: '{old}' occurs {text.count(old)} times, expected {times} (the exporter's layout "
                            "changed?)")
        open(p, "w", encoding="utf-8").write(text.replace(old, new))

    def rebind(d, digest=True):
        """model.safetensors rewritten with the digest of the config.json now there (or none)."""
        p = os.path.join(d, "model.safetensors")
        with safe_open(p, framework="pt") as f:
            meta = dict(f.metadata())
        meta.pop("config_sha256")
        if digest:
            meta["config_sha256"] = hashlib.sha256(open(os.path.join(d, "config.json"), "rb").read()).hexdigest()
        save_file(load_file(p), p, metadata=meta)

    def expect_refusal(case, d, parts):
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.monotonic()
        try:
            hamgan_py.load_generator(d)
            msg = None
        except hamgan_py.ExportError as e:
            msg = str(e)
        except Exception as e:  # noqa: BLE001 - any other exception is the defect
            failures.append(f"{case}: {type(e).__name__} instead of ExportError: {e}")
            return
        dt = time.monotonic() - t0
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0
        if msg is None:
            failures.append(f"{case}: loaded as valid")
            return
        print(f"  {case}: refused in {dt:.2f} s: {msg}")
        for p in parts:
            if p not in msg:
                failures.append(f"{case}: the message lacks '{p}': {msg}")
        if dt > MAX_SECONDS:
            failures.append(f"{case}: refused only after {dt:.1f} s > {MAX_SECONDS}")
        if grew > MAX_RSS_GROWTH_MB:
            failures.append(f"{case}: the process grew by {grew:.0f} MB > {MAX_RSS_GROWTH_MB} before refusing")

    def expect_load(case, d):
        try:
            hamgan_py.load_generator(d)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{case}: {type(e).__name__}: {e}")

    # The unedited exports load.
    expect_load("export A as written", a)
    expect_load("export B as written", b)

    # config.json edited to another Hamburger type: same tensors, so only the binding can tell.
    d = copy(a, "other_type")
    edit_config(d, '"type": "ham_nmf"', '"type": "ham_vq"', times=2)  # the context block and its options
    both = [os.path.join(d, "config.json"), os.path.join(d, "model.safetensors"), "do not belong together"]
    expect_refusal("config.json with context type ham_vq", d, both)
    rebind(d)
    expect_load("the same edit, re-bound (control: the binding is what refused it)", d)

    # B's model.safetensors under A's config.json: same architecture, other weights.
    d = copy(a, "swapped", model_from=b)
    both = [os.path.join(d, "config.json"), os.path.join(d, "model.safetensors"), "do not belong together"]
    expect_refusal("another export's model.safetensors", d, both)
    rebind(d)
    expect_load("the swapped pair, re-bound (control)", d)

    # Missing keys: the key (dotted) and the file named.
    d = copy(a, "missing_key")
    edit_config(d, '"z_chunk": 0,', "")
    expect_refusal("config.json without z_chunk", d, [os.path.join(d, "config.json"), "'z_chunk'", "missing"])
    d = copy(a, "missing_nested_key")
    edit_config(d, '"resolved": {"d": ', '"resolved": {"dd": ')
    expect_refusal("config.json without context.resolved.d", d,
                   [os.path.join(d, "config.json"), "'context.resolved.d'", "missing"])

    # A huge channel count: G's first linear map would be 16e12 x 8 floats (512 TB).
    d = copy(a, "huge_channels")
    edit_config(d, '"blocks": [{"in": 16,', '"blocks": [{"in": 1000000000000,')
    expect_refusal("blocks[0].in = 1e12", d, [os.path.join(d, "config.json"), "do not belong together"])
    rebind(d)
    expect_refusal("blocks[0].in = 1e12, re-bound", d,
                   [os.path.join(d, "config.json"), os.path.join(d, "model.safetensors"), "'linear.weight'",
                    "[16000000000000, 8]"])

    # An export without the digest.
    d = copy(a, "no_digest")
    rebind(d, digest=False)
    expect_refusal("model.safetensors without config_sha256", d,
                   [os.path.join(d, "model.safetensors"), "config_sha256", "export the checkpoint again"])

    # z_dim past hamgan's range (a 4 TB latent), re-bound so that only the range check can refuse.
    d = copy(a, "huge_z")
    edit_config(d, '"z_dim": ', '"z_dim": 1000000000000, "was_z_dim": ')
    rebind(d)
    expect_refusal("z_dim = 1e12, re-bound", d, [os.path.join(d, "config.json"), "'z_dim'", "[1, 65536]"])

    # JSON nested deeper than Python's stack: ExportError, not a RecursionError traceback.
    deep = "[" * 100000 + "]" * 100000
    d = copy(a, "deep_config")
    open(os.path.join(d, "config.json"), "w").write(deep)
    expect_refusal("config.json nested 100,000 deep", d, [os.path.join(d, "config.json"), "not valid JSON"])
    d = copy(a, "deep_header")
    header = ('{"a":' * 100000 + "1" + "}" * 100000).encode()
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header)
    expect_refusal("a safetensors header nested 100,000 deep", d,
                   [os.path.join(d, "model.safetensors"), "not valid JSON"])

    if failures:
        print("check_export_edits: FAILED\n" + "\n".join(failures))
        return 1
    print("check_export_edits: every edited export refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
