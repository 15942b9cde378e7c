#!/usr/bin/env python3
"""Checker for tests/test_export.cpp: each exported generator against the C++ sampler's images.

For every manifest line "<variant> <module> <dir>":
  - python/hamgan_py's load_generator(dir/export) redraws the images of oracle.safetensors (the
    C++ `hamgan sample` path: same seed, classes, k; latents and Hamburger bases seeded as there)
    in fp32 on the CPU: |python - C++| <= ATOL elementwise (fp32 rounding: the C++ computes the
    upsampling conv in its folded sub-pixel form and NMF with fused CPU kernels, so the summation
    order differs; tanh keeps the outputs in [-1, 1]);
  - the latents hamgan_py derives equal the C++ ones exactly (same mt19937 stream);
  - model.safetensors read by the safetensors package's own readers (load_file, safe_open) holds
    exactly the module's tensors (names, shapes, values), with the format metadata and the
    SHA-256 of config.json's bytes that binds the two files;
  - the context module's residual branch moves the images by more than MIN_CONTEXT_EFFECT;
  - hamgan_py.export_onnx + onnxruntime reproduce the module within ONNX_ATOL, except the modules
    in EXPECTED_ONNX_FAILURES, whose export must fail (an export that starts working fails the
    check, so the list stays true).
Writes one line per variant to --results; exits 1 on any failure, with the reasons.
"""
import argparse
import hashlib
import json
import os
import sys
import tempfile

ATOL = 3e-6  # the largest difference seen over the sweep is 9e-7 (fp32 eps at 1.0 is 1.2e-7)
ONNX_ATOL = 3e-6
# The context module must matter: without its residual branch the images move by more than this,
# so a wrong module cannot hide under ATOL.
MIN_CONTEXT_EFFECT = 100 * ATOL
EXPECTED_ONNX_FAILURES = {
    "ham_cd": "the ridge solve of Eq. 14 uses torch.linalg.cholesky and torch.linalg.solve_triangular, "
              "which have no ONNX operator (torch.onnx has no symbolic for aten::linalg_cholesky_ex)",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--results", required=True)
    args = ap.parse_args()
    try:
        import torch
        import safetensors
        from safetensors import safe_open
        from safetensors.torch import load_file
        import onnxruntime as ort
        import hamgan_py
    except ImportError as e:
        sys.exit(f"check_export: {sys.executable} lacks a package the check needs ({e}); install torch, "
                 "safetensors, onnx and onnxruntime there (scripts/setup.sh makes the oracle venv)")
    torch.set_num_threads(1)
    print(f"check_export: torch {torch.__version__}, safetensors {safetensors.__version__}, onnxruntime {ort.__version__}")
    failures, lines = [], []
    with open(args.manifest) as f:
        entries = [l.split() for l in f if l.strip()]
    for variant, module, d in entries:
        ex = os.path.join(d, "export")
        oracle = load_file(os.path.join(d, "oracle.safetensors"))
        with safe_open(os.path.join(d, "oracle.safetensors"), framework="pt") as f:
            seed = int(f.metadata()["seed"])
        g = hamgan_py.load_generator(ex)
        cfg = g.config
        bad = []
        if cfg["context"]["type"] != module:
            bad.append(f"config.json context type {cfg['context']['type']} != {module}")
        if cfg["class_names"] != ["tee shirt", "trouser", 'pull"over']:
            bad.append(f"class_names {cfg['class_names']}")
        classes, ks = oracle["classes"].tolist(), oracle["ks"].tolist()
        z = g.latents(seed, classes, ks)
        if not torch.equal(z, oracle["z"]):
            bad.append(f"latents differ from the C++ ones (max {float((z - oracle['z']).abs().max()):.3g})")
        with torch.no_grad():
            images = g.sample(seed, classes, ks)
        diff = float((images - oracle["images"]).abs().max())
        if not diff <= ATOL:
            bad.append(f"images differ: max |python - C++| = {diff:.3g} > {ATOL}")
        if g.context is not None:
            c = g.context
            weight = c.gamma if hasattr(c, "gamma") else c.sigma
            saved = weight.clone()
            with torch.no_grad():
                weight.zero_()
                effect = float((g.sample(seed, classes, ks) - images).abs().max())
                weight.copy_(saved)
            if not effect > MIN_CONTEXT_EFFECT:
                bad.append(f"the context module moves the images by only {effect:.3g} <= {MIN_CONTEXT_EFFECT}")
        # The file through the safetensors package's own readers.
        sd = g.state_dict()
        st = load_file(os.path.join(ex, "model.safetensors"))
        if sorted(st) != sorted(sd):
            bad.append(f"tensor names differ: file-only {sorted(set(st) - set(sd))}, module-only {sorted(set(sd) - set(st))}")
        with safe_open(os.path.join(ex, "model.safetensors"), framework="pt") as f:
            meta = f.metadata()
            with open(os.path.join(ex, "config.json"), "rb") as cf:
                digest = hashlib.sha256(cf.read()).hexdigest()
            if meta != {"format": "hamgan-generator", "format_version": "1", "config_sha256": digest}:
                bad.append(f"metadata {meta}")
            for k in f.keys():
                t = f.get_tensor(k)
                if k in sd and (t.shape != sd[k].shape or t.dtype != sd[k].dtype or not torch.equal(t, sd[k])):
                    bad.append(f"tensor {k}: {tuple(t.shape)} {t.dtype} differs from the module's")
        if any(k.endswith(("weight_orig", "weight_u", "weight_v", "num_batches_tracked")) for k in st):
            bad.append("spectral-norm or BN bookkeeping tensors were exported")
        # ONNX.
        onnx_note = ""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "g.onnx")
            try:
                hamgan_py.export_onnx(g, path)
                exported, err = True, None
            except Exception as e:  # noqa: BLE001 - the expected failures are exceptions of torch.onnx
                exported, err = False, e
            if module in EXPECTED_ONNX_FAILURES:
                if exported:
                    bad.append(f"ONNX export of {module} is listed as an expected failure but succeeded: update the list")
                else:
                    onnx_note = "onnx=expected-failure"
                    print(f"  {variant}: ONNX export fails as expected ({type(err).__name__}: {str(err).splitlines()[0][:160]})")
            elif not exported:
                bad.append(f"ONNX export failed: {type(err).__name__}: {err}")
            else:
                ham = g.random_hamburger()
                bases = hamgan_py.sample_bases(g, seed, classes, ks)
                feeds = {"z": z.numpy(), "y": oracle["classes"].numpy()}
                if ham is not None:
                    feeds["bases"] = bases.numpy()
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                got = torch.from_numpy(sess.run(["images"], feeds)[0])
                od = float((got - images).abs().max())
                onnx_note = f"onnx_max_abs_diff={od:.3g}"
                if not od <= ONNX_ATOL:
                    bad.append(f"onnxruntime differs from the module: {od:.3g} > {ONNX_ATOL}")
        verdict = "equal" if not bad else "DIFFERENT"
        line = f"{variant} {module} {verdict} max_abs_diff={diff:.3g} {onnx_note}"
        print(line + ("" if not bad else "\n    " + "\n    ".join(bad)))
        lines.append(line)
        failures += [f"{variant}: {b}" for b in bad]
    with open(args.results, "w") as f:
        f.write("\n".join(lines) + "\n")
    if failures:
        print("check_export: FAILED\n" + "\n".join(failures))
        return 1
    print(f"check_export: {len(entries)} exports equal within {ATOL}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
