"""Shared helpers for oracle scripts: argument parsing and saving plain dicts."""
import argparse
import os

import torch


def out_dir():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    return args.out


def save(directory, name, tensors):
    """torch.save of a plain dict (LibTorch's pickle_load rejects OrderedDict)."""
    plain = {}
    for k, v in tensors.items():
        plain[str(k)] = v.detach().clone().contiguous() if torch.is_tensor(v) else v
    torch.save(plain, os.path.join(directory, name))


def prefixed(prefix, state):
    """Copies now: state_dict() values alias the live tensors that forward mutates."""
    return {prefix + "." + k: v.detach().clone() for k, v in state.items()}
