"""The two files of a `hamgan export` directory, checked before a module is built from them
(gan/sample/export_generator.h):
  - config.json: every key load_generator reads, with its type, named with the file when wrong;
  - model.safetensors: its header alone (8-byte length, JSON), each tensor's dtype, shape and
    byte range bounded by the file, so nothing later allocates more than the file holds;
  - the binding: the SHA-256 of config.json's exact bytes stored in model.safetensors'
    metadata (config_sha256); a config.json edited by hand or a model.safetensors from another
    export no longer matches it."""
import hashlib
import json
import os
import struct

FORMAT = "hamgan-generator"
FORMAT_VERSION = 1
CONFIG_FILE = "config.json"
MODEL_FILE = "model.safetensors"
DIGEST_KEY = "config_sha256"
# The safetensors package refuses headers above 100 MB; an export's is a few kilobytes.
MAX_HEADER_BYTES = 100 * 1000 * 1000
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
               "BOOL": 1}
HAMBURGERS = ("ham_nmf", "ham_vq", "ham_cd")


class ExportError(ValueError):
    """An export directory that cannot be loaded as it is; the message names the file(s)."""


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


_KINDS = {
    "int>=1": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    # hamgan's own ranges (gan/config/config_keys.cpp): what an export of it can hold.
    "z_dim": (lambda v: _is_int(v) and 1 <= v <= 65536, "an integer in [1, 65536] (model z_dim)"),
    "n_classes": (lambda v: _is_int(v) and 1 <= v <= 1 << 20, "an integer in [1, 1048576]"),
    "channels": (lambda v: _is_int(v) and v in (1, 3), "1 or 3"),
    "int>=0": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "int>=-1": (lambda v: _is_int(v) and v >= -1, "an integer >= -1"),
    "number>0": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0, "a number > 0"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "list": (lambda v: isinstance(v, list) and len(v) > 0, "a non-empty list"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
}


def _key(obj, key, where, kind, path):
    """obj[key], checked to be of `kind`; `where` is the key's dotted prefix for the message."""
    ok, expected = _KINDS[kind]
    name = where + key
    if key not in obj:
        raise ExportError(f"{path}: key '{name}' is missing; expected {expected}")
    v = obj[key]
    if not ok(v):
        raise ExportError(f"{path}: key '{name}' is {json.dumps(v)[:80]}; expected {expected}")
    return v


def check_config(config, path):
    """Every key load_generator and Generator read, with its type; raises ExportError naming the
    key and `path`."""
    if not isinstance(config, dict):
        raise ExportError(f"{path}: expected a JSON object, found {type(config).__name__}")
    for i, b in enumerate(_key(config, "blocks", "", "list", path)):
        if not isinstance(b, dict):
            raise ExportError(f"{path}: key 'blocks[{i}]' is {json.dumps(b)[:80]}; expected an object")
        for k in ("in", "out"):
            _key(b, k, f"blocks[{i}].", "int>=1", path)
        _key(b, "upsample", f"blocks[{i}].", "bool", path)
    _key(config, "z_dim", "", "z_dim", path)
    _key(config, "n_classes", "", "n_classes", path)
    _key(config, "image_channels", "", "channels", path)
    for k in ("shared_dim", "z_chunk"):
        _key(config, k, "", "int>=0", path)
    if config["z_chunk"] > config["z_dim"]:
        raise ExportError(f"{path}: key 'z_chunk' is {config['z_chunk']}, more than z_dim {config['z_dim']}")
    _key(config, "hier", "", "bool", path)
    _key(config, "bn_eps", "", "number>0", path)
    if config.get("class_names") is not None:
        names = _key(config, "class_names", "", "list", path)
        if not all(isinstance(n, str) for n in names):
            raise ExportError(f"{path}: key 'class_names' holds a non-string; expected null or a list of strings")
    ctx = _key(config, "context", "", "dict", path)
    kind = _key(ctx, "type", "context.", "str", path)
    _key(ctx, "after_block", "context.", "int>=-1", path)
    if "options" in ctx:
        _key(ctx, "options", "context.", "dict", path)
    if kind in HAMBURGERS:
        resolved = _key(ctx, "resolved", "context.", "dict", path)
        for k in ("d", "r", "groups"):
            _key(resolved, k, "context.resolved.", "int>=1", path)
        _key(resolved, "eval_steps", "context.resolved.", "int>=0", path)
        _key(resolved, "random_bases", "context.resolved.", "bool", path)


def read_config(directory):
    """(config, its exact bytes) of DIR/config.json, format and keys checked."""
    path = os.path.join(directory, CONFIG_FILE)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: nested past Python's stack
        raise ExportError(f"{path}: not valid JSON ({type(e).__name__}: {e})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        found = config.get("format") if isinstance(config, dict) else None
        raise ExportError(f"{path}: not a hamgan export (format {found!r}; expected {FORMAT!r})")
    version = config.get("format_version")
    if not _is_int(version) or version < 1:
        raise ExportError(f"{path}: key 'format_version' is {json.dumps(version)}; expected an integer >= 1")
    if version > FORMAT_VERSION:
        raise ExportError(f"{path}: format_version {version} is newer than this hamgan_py reads ({FORMAT_VERSION})")
    check_config(config, path)
    return config, raw


def read_header(directory):
    """(metadata, {name: (dtype, shape)}) from DIR/model.safetensors' header, without reading the
    tensor data; every byte range must lie in the file and match its dtype and shape."""
    path = os.path.join(directory, MODEL_FILE)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            raise ExportError(f"{path}: {size} bytes, too short for a safetensors file (an 8-byte header length first)")
        (n,) = struct.unpack("<Q", prefix)
        if n > size - 8 or n > MAX_HEADER_BYTES:
            raise ExportError(f"{path}: header length {n} does not fit the file ({size} bytes)")
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: nested past the stack
            raise ExportError(f"{path}: the header is not valid JSON ({type(e).__name__}: {e})") from None
    if not isinstance(header, dict):
        raise ExportError(f"{path}: the header is not a JSON object")
    data_bytes = size - 8 - n
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict):
        raise ExportError(f"{path}: __metadata__ is not an object")
    tensors = {}
    for name, e in header.items():
        dtype = e.get("dtype") if isinstance(e, dict) else None
        shape = e.get("shape") if isinstance(e, dict) else None
        offsets = e.get("data_offsets") if isinstance(e, dict) else None
        if (dtype not in DTYPE_BYTES or not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape)
                or not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_int(o) for o in offsets)):
            raise ExportError(f"{path}: tensor '{name}': expected a dtype of {sorted(DTYPE_BYTES)}, a shape of "
                              f"integers >= 0 and two data_offsets, found {json.dumps(e)[:160]}")
        begin, end = offsets
        numel = 1
        for d in shape:
            numel *= d
        if not 0 <= begin <= end <= data_bytes or end - begin != numel * DTYPE_BYTES[dtype]:
            raise ExportError(f"{path}: tensor '{name}' ({dtype} {shape}) declares bytes [{begin}, {end}), which "
                              f"do not match its shape or lie outside the file's {data_bytes} data bytes")
        tensors[name] = (dtype, tuple(shape))
    return meta, tensors


def check_binding(directory, config_bytes, meta):
    """Refuses a model.safetensors whose metadata does not carry the SHA-256 of these config.json bytes."""
    config_path, model_path = os.path.join(directory, CONFIG_FILE), os.path.join(directory, MODEL_FILE)
    if meta.get("format") != FORMAT:
        raise ExportError(f"{model_path}: not a hamgan export's tensors (metadata format {meta.get('format')!r}; "
                          f"expected {FORMAT!r})")
    want = meta.get(DIGEST_KEY)
    have = hashlib.sha256(config_bytes).hexdigest()
    if want is None:
        raise ExportError(f"{model_path} has no {DIGEST_KEY} in its metadata, so nothing ties it to {config_path} "
                          "(an export of an older hamgan): export the checkpoint again with `hamgan export`")
    if want != have:
        raise ExportError(f"{model_path} and {config_path} do not belong together: the tensors were exported with a "
                          f"config.json of SHA-256 {want}, this one's is {have} (config.json edited by hand, or "
                          "model.safetensors taken from another export); export the checkpoint again with "
                          "`hamgan export` instead of editing either file")


def check_tensors(expected, found, directory):
    """Compares the {name: (dtype, shape)} the config implies with the file's header; raises
    ExportError naming the first tensors that differ and both files."""
    config_path, model_path = os.path.join(directory, CONFIG_FILE), os.path.join(directory, MODEL_FILE)

    def few(names):
        names = sorted(names)
        return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")

    missing, extra = set(expected) - set(found), set(found) - set(expected)
    if missing:
        raise ExportError(f"{model_path} lacks tensors that {config_path} implies: {few(missing)}")
    if extra:
        raise ExportError(f"{model_path} holds tensors that {config_path} does not imply: {few(extra)}")
    for name in expected:  # the module's order: G's first tensor that differs
        if expected[name] != found[name]:
            (fd, fs), (ed, es) = found[name], expected[name]
            raise ExportError(f"{model_path}: tensor '{name}' is {fd} {list(fs)}, where {config_path} implies "
                              f"{ed} {list(es)}")
