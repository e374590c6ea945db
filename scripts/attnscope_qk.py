"""Write and read AttnScope Q/K dumps (format ``attnscope-qk``, version 1).

A Q/K dump keeps, per layer, the queries and keys an attention kernel received, instead of
its T x T maps; AttnScope (``attnscope-cli stats|render|export``, File > Open) computes every
map, pooled view and statistic from them exactly. Use this module where a model lives
(PyTorch on a cluster) and inspect the dump on a desktop. design.md, "Contract: attention from
queries and keys", is the definition; this module is its writer in Python.

Requirements: Python 3.9+, numpy. torch is optional and never imported here: torch tensors
of any dtype (bfloat16 included) and on any device are accepted as given.

The folder it writes::

    DUMP/attnscope-qk.json        {"format": "attnscope-qk", "version": 1, "tokens": [...],
                                   "keyTokens": [...], "queryPositions": [...],
                                   "keyPositions": [...],               (these optional)
                                   "layers": [{"file": "layer-000.safetensors", "heads": H,
                                               "kvHeads": KV, "headDim": hd, "scale": s,
                                               "causal": true, "window": null,
                                               "softcap": null}, ...]}
    DUMP/layer-000.safetensors    "q" [Tq, H, hd], "k" [Tk, KV, hd] (F32, F16 or BF16),
                                  optional "sinks" [H] and "lse" [H, Tq] (F32)

Weights of (layer, head h): row i is the softmax over allowed j of scale * q_i . k_j
(soft-capped, c * tanh(x / c), when ``softcap`` is set), k from KV head h // (H / KV); j is
allowed when (not causal or kp_j <= qp_i) and (no window or kp_j > qp_i - window), qp and kp
being the positions (default 0..T-1). With sinks, the head's sink logit joins the softmax's
normaliser and is then dropped, so a row sums to less than 1. ``weights()`` computes exactly
this in float64.

Capture recipe (Hugging Face transformers 4.50+ and 5.x; docs/qk-dumps.md has the full page and
scripts/capture_qk_transformers.py a runnable script): register an attention function that
records what the kernel receives, then calls the fast kernel unchanged::

    import torch, transformers
    from transformers import AttentionInterface, AutoModelForCausalLM, AutoTokenizer
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    import attnscope_qk

    layers = []
    def capture(module, query, key, value, attention_mask, **kwargs):
        # query [1, H, T, hd], key [1, KV, T, hd]: after q/k norms and RoPE, before repeat_kv
        layers.append(dict(q=query[0].detach().cpu(), k=key[0].detach().cpu(), layout="htd",
                           scale=kwargs.get("scaling") or query.shape[-1] ** -0.5,
                           causal=getattr(module, "is_causal", True),
                           window=kwargs.get("sliding_window"), softcap=kwargs.get("softcap"),
                           sinks=kwargs.get("s_aux")))
        return ALL_ATTENTION_FUNCTIONS["sdpa"](module, query, key, value, attention_mask, **kwargs)

    AttentionInterface.register("capture", capture)
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS   # 4.53+: masks too
    ALL_MASK_ATTENTION_FUNCTIONS.register("capture", ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    model = AutoModelForCausalLM.from_pretrained(MODEL, attn_implementation="capture")
    tok = AutoTokenizer.from_pretrained(MODEL)
    ids = tok(TEXT, return_tensors="pt").input_ids
    with torch.no_grad():
        model(ids, use_cache=False)
    attnscope_qk.write_dump("dump", layers, tokens=tok.convert_ids_to_tokens(ids[0]))

Then ``attnscope-cli stats dump`` or File > Open > dump/attnscope-qk.json.

Layouts: a layer's q and k are [T, heads, hd] ("thd", the dump's own layout) unless its
``layout`` (or write_dump's ``layout``) says otherwise: "htd" for [heads, T, hd] and "bhtd" for
[1, heads, T, hd] (transformers' query/key inside attention functions; a batch other than 1 is
refused: index one sequence first).

Errors are ValueError (TypeError for a wrong kind of argument) with one line naming the layer
and the field or tensor: ``layer 3: k: expected [T, KV, hd] = 3 dimensions, found 4``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import struct
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

__all__ = ["QkLayer", "QkDump", "write_dump", "read_dump", "weights", "log_sum_exp", "INDEX_NAME", "FORMAT",
           "VERSION"]

FORMAT = "attnscope-qk"
VERSION = 1
INDEX_NAME = "attnscope-qk.json"

# Stored dtype -> bytes per value. q and k may be any of these; sinks and lse are always F32.
_DTYPE_SIZES = {"F32": 4, "F16": 2, "BF16": 2}
_LAYOUTS = ("thd", "htd", "bhtd")


@dataclasses.dataclass
class QkLayer:
    """One layer of a dump: q and k as its attention kernel received them, and its facts.

    q: [Tq, H, hd] (or the ``layout`` given); k: [Tk, KV, hd], KV dividing H. numpy arrays or
        torch tensors of any float dtype and device. read_dump() gives float32 numpy arrays
        [Tq, H, hd] and [Tk, KV, hd] converted from the stored dtype (exactly).
    scale: the factor on q . k; None means 1 / sqrt(hd) (what PyTorch's SDPA does with
        scale=None).
    causal: j must not come after i (positions compared).
    window: sliding window in positions (j allowed when kp_j > qp_i - window); None or 0: none.
    softcap: logit soft-capping c > 0 (scores become c * tanh(scores / c)); None: none.
    sinks: [H] sink logits (gpt-oss's ``s_aux``), or None.
    lse: [H, Tq] the kernel's log-sum-exp per row, sinks included, or None; AttnScope checks
        its own recomputation against it.
    dtype: how write_dump stores q and k: "F32", "BF16" or "F16"; None: write_dump's
        ``dtype`` (F32 by default). A bf16 capture stored as "BF16" (or "F32") keeps its values
        exactly. read_dump() sets it to the stored dtype.
    layout: the layout of q and k as given: "thd", "htd" or "bhtd" (see the module docstring);
        None: write_dump's ``layout`` argument.
    query_positions, key_positions: one per query (key) row, what the mask and weights()
        compare (None: 0..T-1); read_dump fills them from the index. A dump has one set for all
        layers: write_dump's arguments, or the layers' own, which must then agree.
    """

    q: Any
    k: Any
    scale: Optional[float] = None
    causal: bool = True
    window: Optional[int] = None
    softcap: Optional[float] = None
    sinks: Any = None
    lse: Any = None
    dtype: Optional[str] = None
    layout: Optional[str] = None
    query_positions: Optional[np.ndarray] = None
    key_positions: Optional[np.ndarray] = None

    @property
    def heads(self) -> int:
        return int(self.q.shape[1])

    @property
    def kv_heads(self) -> int:
        return int(self.k.shape[1])

    @property
    def head_dim(self) -> int:
        return int(self.q.shape[2])


@dataclasses.dataclass
class QkDump:
    """What read_dump() returns: the index's labels and positions and every layer (QkLayer,
    q and k as float32 [T, heads, hd], each with the dump's positions and its stored dtype)."""

    folder: str
    layers: List[QkLayer]
    tokens: Optional[List[str]] = None
    key_tokens: Optional[List[str]] = None
    query_positions: Optional[np.ndarray] = None
    key_positions: Optional[np.ndarray] = None


_LAYER_FIELDS = {f.name for f in dataclasses.fields(QkLayer)}


def _is_torch_tensor(x: Any) -> bool:
    # Decided by the type's module so that torch is never imported here.
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def _as_float32(x: Any, what: str) -> np.ndarray:
    """A float32 numpy copy of a numpy array, a torch tensor (any dtype, any device) or a list."""
    if _is_torch_tensor(x):
        t = x.detach()
        if t.is_complex():
            raise TypeError(f"{what}: expected real values, found a complex tensor")
        # bfloat16 has no numpy dtype: widening to float32 on the tensor's own device is exact.
        return t.float().cpu().numpy().astype(np.float32, copy=True)
    a = np.asarray(x)
    if a.dtype.kind not in "fiu" and a.dtype.name != "bfloat16":
        raise TypeError(f"{what}: expected a float array or tensor, found dtype {a.dtype}")
    return np.array(a, dtype=np.float32, copy=True)


def _check_finite(a: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        place = np.unravel_index(int(np.argmax(bad)), a.shape)
        kind = "NaN" if np.isnan(a[place]) else "infinity"
        raise ValueError(f"{what}: {kind} at [{', '.join(str(int(p)) for p in place)}]")


def _to_thd(a: np.ndarray, layout: str, what: str) -> np.ndarray:
    if layout == "thd":
        if a.ndim != 3:
            raise ValueError(f"{what}: expected [T, heads, hd] (layout 'thd') = 3 dimensions, found shape "
                             f"{list(a.shape)}")
        return a
    if layout == "bhtd":
        if a.ndim != 4:
            raise ValueError(f"{what}: expected [1, heads, T, hd] (layout 'bhtd') = 4 dimensions, found shape "
                             f"{list(a.shape)}")
        if a.shape[0] != 1:
            raise ValueError(f"{what}: batch of {a.shape[0]} sequences; a dump holds one (pass x[b:b+1])")
        a = a[0]
    elif a.ndim != 3:
        raise ValueError(f"{what}: expected [heads, T, hd] (layout 'htd') = 3 dimensions, found shape "
                         f"{list(a.shape)}")
    return np.ascontiguousarray(a.transpose(1, 0, 2))


def _optional_number(value: Any, what: str) -> Optional[float]:
    if value is None:
        return None
    if _is_torch_tensor(value) or isinstance(value, np.ndarray):
        if int(np.prod(value.shape)) != 1:
            raise ValueError(f"{what}: expected a number, found shape {list(value.shape)}")
        value = value.item()
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected a number, found {type(value).__name__}") from None


def _positions(values: Any, count: int, what: str) -> Optional[np.ndarray]:
    if values is None:
        return None
    if _is_torch_tensor(values):
        values = values.detach().cpu().numpy()
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"{what}: expected a list of integers, found shape {list(a.shape)}")
    if a.size and a.dtype.kind not in "iu":
        if a.dtype.kind != "f" or not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(f"{what}: expected whole numbers")
    a = a.astype(np.int64)
    if a.size != count:
        raise ValueError(f"{what}: {a.size} entries for {count} rows")
    if a.size and a.min() < 0:
        raise ValueError(f"{what}: negative position {int(a.min())} at index {int(np.argmin(a))}")
    return a


def _labels(values: Any, count: int, what: str) -> Optional[List[str]]:
    if values is None:
        return None
    labels = list(values)
    for i, s in enumerate(labels):
        if not isinstance(s, str):
            raise TypeError(f"{what}[{i}]: expected a string, found {type(s).__name__}")
    if len(labels) != count:
        raise ValueError(f"{what}: {len(labels)} labels for {count} rows")
    return labels


def _layer_fields(layer: Any, index: int) -> Dict[str, Any]:
    if isinstance(layer, Mapping):
        fields = dict(layer)
    elif dataclasses.is_dataclass(layer):
        fields = {f.name: getattr(layer, f.name) for f in dataclasses.fields(layer)}
    else:
        raise TypeError(f"layer {index}: expected a dict or QkLayer, found {type(layer).__name__}")
    unknown = sorted(set(fields) - _LAYER_FIELDS)
    if unknown:
        raise ValueError(f"layer {index}: unknown field '{unknown[0]}' (known: {', '.join(sorted(_LAYER_FIELDS))})")
    for name in ("q", "k"):
        if fields.get(name) is None:
            raise ValueError(f"layer {index}: {name} is missing")
    return fields


def _prepare_layer(layer: Any, index: int, layout: str, dtype: Optional[str]) -> QkLayer:
    """Converts and validates one layer as the C++ reader does (QkDump.h, validateQkLayer)."""
    f = _layer_fields(layer, index)
    where = f"layer {index}"
    lay = f.get("layout") or layout
    if lay not in _LAYOUTS:
        raise ValueError(f"{where}: layout '{lay}' is not one of {', '.join(_LAYOUTS)}")
    dtype = f.get("dtype") or dtype or "F32"
    if dtype not in _DTYPE_SIZES:
        raise ValueError(f"{where}: dtype '{dtype}' is not one of F32, F16, BF16")
    q = _to_thd(_as_float32(f["q"], f"{where}: q"), lay, f"{where}: q")
    k = _to_thd(_as_float32(f["k"], f"{where}: k"), lay, f"{where}: k")
    tq, heads, hd = q.shape
    tk, kv, khd = k.shape
    if tq < 1 or tk < 1:
        raise ValueError(f"{where}: at least one query and one key needed, found Tq {tq}, Tk {tk}")
    if heads < 1 or kv < 1:
        raise ValueError(f"{where}: heads {heads} and kvHeads {kv} must be positive")
    if heads % kv != 0:
        raise ValueError(f"{where}: heads {heads} is not a multiple of kvHeads {kv}")
    if hd < 1 or khd != hd:
        raise ValueError(f"{where}: k: head dim {khd} differs from q's {hd}")
    _check_finite(q, f"{where}: q")
    _check_finite(k, f"{where}: k")

    scale = _optional_number(f.get("scale"), f"{where}: scale")
    if scale is None:
        scale = 1.0 / math.sqrt(hd)
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"{where}: scale {scale} must be positive and finite")
    window = _optional_number(f.get("window"), f"{where}: window")
    if window is not None:
        if not math.isfinite(window) or window != int(window) or window < 0:
            raise ValueError(f"{where}: window {window} must be a whole number >= 0 (None or 0: no window)")
        window = int(window) or None
    softcap = _optional_number(f.get("softcap"), f"{where}: softcap")
    if softcap is not None and (not math.isfinite(softcap) or softcap <= 0):
        raise ValueError(f"{where}: softcap {softcap} must be positive and finite (None: no soft-capping)")
    causal = f.get("causal", True)
    if _is_torch_tensor(causal) or isinstance(causal, np.ndarray):
        causal = causal.item()
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"{where}: causal: expected True or False, found {type(causal).__name__}")

    sinks = f.get("sinks")
    if sinks is not None:
        sinks = _as_float32(sinks, f"{where}: sinks")
        if sinks.shape != (heads,):
            raise ValueError(f"{where}: sinks: expected [{heads}], found {list(sinks.shape)}")
        _check_finite(sinks, f"{where}: sinks")
    lse = f.get("lse")
    if lse is not None:
        lse = _as_float32(lse, f"{where}: lse")
        if lse.shape != (heads, tq):
            raise ValueError(f"{where}: lse: expected [{heads}, {tq}], found {list(lse.shape)}")
        _check_finite(lse, f"{where}: lse")
    return QkLayer(q=q, k=k, scale=scale, causal=bool(causal), window=window, softcap=softcap, sinks=sinks,
                   lse=lse, dtype=dtype, layout="thd",
                   query_positions=_positions(f.get("query_positions"), tq, f"{where}: query_positions"),
                   key_positions=_positions(f.get("key_positions"), tk, f"{where}: key_positions"))


def _bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, rounded to nearest even (as torch's .bfloat16())."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def _bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _encode(a: np.ndarray, dtype: str, what: str) -> bytes:
    if dtype == "F32":
        stored = a.astype("<f4")
        back = stored
    elif dtype == "F16":
        with np.errstate(over="ignore"):
            stored = a.astype("<f2")
        back = stored.astype(np.float32)
    else:
        stored = _bf16_bits(a).astype("<u2")
        back = _bf16_to_float32(stored.astype(np.uint16))
    if not np.all(np.isfinite(back)):
        place = np.unravel_index(int(np.argmax(~np.isfinite(back))), a.shape)
        raise ValueError(f"{what}: {float(a[place])!r} at [{', '.join(str(int(p)) for p in place)}] overflows "
                         f"{dtype}")
    return np.ascontiguousarray(stored).tobytes()


def _safetensors_bytes(tensors: Sequence[tuple]) -> bytes:
    """A safetensors file: 8-byte little-endian header length, JSON header padded with spaces
    to a multiple of 8 (as Hugging Face's writer does), then the data. Tensors go in order of
    decreasing element size then name, so every tensor starts aligned to its element size."""
    ordered = sorted(tensors, key=lambda t: (-_DTYPE_SIZES[t[1]], t[0]))
    header: Dict[str, Any] = {"__metadata__": {"format": "pt", "writer": "attnscope_qk.py"}}
    offset = 0
    for name, dtype, shape, data in ordered:
        header[name] = {"dtype": dtype, "shape": [int(s) for s in shape], "data_offsets": [offset,
                                                                                            offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in ordered)


def _write_file(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def layer_file_name(index: int) -> str:
    """layer-000.safetensors, layer-001.safetensors, ..."""
    return f"layer-{index:03d}.safetensors"


def write_dump(folder: Union[str, os.PathLike], layers: Sequence[Any], tokens: Optional[Sequence[str]] = None,
               key_tokens: Optional[Sequence[str]] = None, query_positions: Any = None, key_positions: Any = None,
               layout: str = "thd", dtype: Optional[str] = None) -> str:
    """Writes a version-1 Q/K dump into ``folder`` and returns its path.

    layers: one per model layer, in order: a dict with the fields of QkLayer (q and k required;
        scale, causal, window, softcap, sinks, lse, dtype, layout optional) or a QkLayer.
        Every layer must have the same Tq and Tk.
    tokens: Tq labels of the query rows; key_tokens: Tk labels of the keys (AttnScope uses
        tokens for both when Tq = Tk and key_tokens is None).
    query_positions / key_positions: Tq / Tk non-negative integers compared by the causal and
        window mask (None: 0..T-1). Give them for a chunk of a longer sequence, or for keys from
        a cache: e.g. queries 1000..1063 against keys 0..1063.
    layout: layout of every layer's q and k that gives none: "thd" [T, heads, hd] (default),
        "htd" [heads, T, hd] or "bhtd" [1, heads, T, hd] (transformers).
    dtype: stored dtype of q and k for every layer that gives none: "F32" (default), "BF16",
        "F16". sinks and lse are always F32.

    Everything is validated before anything is written (ValueError/TypeError, one line naming
    the layer and field). Atomic: the files go into a fresh sibling folder that then takes
    ``folder``'s place; an existing dump there is replaced, any other existing non-empty folder
    is refused.
    """
    folder = os.path.abspath(os.fspath(folder))
    if layout not in _LAYOUTS:
        raise ValueError(f"layout '{layout}' is not one of {', '.join(_LAYOUTS)}")
    if dtype is not None and dtype not in _DTYPE_SIZES:
        raise ValueError(f"dtype '{dtype}' is not one of F32, F16, BF16")
    layers = list(layers)
    if not layers:
        raise ValueError("layers: a dump needs at least one layer")
    prepared = []
    for i, layer in enumerate(layers):
        p = _prepare_layer(layer, i, layout, dtype)
        if prepared and (p.q.shape[0], p.k.shape[0]) != (prepared[0].q.shape[0], prepared[0].k.shape[0]):
            raise ValueError(f"layer {i}: Tq {p.q.shape[0]}, Tk {p.k.shape[0]} differ from layer 0's "
                             f"Tq {prepared[0].q.shape[0]}, Tk {prepared[0].k.shape[0]}")
        prepared.append(p)
    tq, tk = prepared[0].q.shape[0], prepared[0].k.shape[0]
    index: Dict[str, Any] = {"format": FORMAT, "version": VERSION}
    labels = _labels(tokens, tq, "tokens")
    key_labels = _labels(key_tokens, tk, "key_tokens")
    qp = _positions(query_positions, tq, "query_positions")
    kp = _positions(key_positions, tk, "key_positions")
    # A dump has one set of positions: a layer that gives its own (a read_dump() layer) must agree.
    for i, p in enumerate(prepared):
        for name, mine in (("query_positions", p.query_positions), ("key_positions", p.key_positions)):
            if mine is None:
                continue
            common = qp if name == "query_positions" else kp
            if common is None:
                common = mine
            elif not np.array_equal(common, mine):
                raise ValueError(f"layer {i}: {name} differ from the dump's (one set for every layer)")
            if name == "query_positions":
                qp = common
            else:
                kp = common
    if labels is not None:
        index["tokens"] = labels
    if key_labels is not None:
        index["keyTokens"] = key_labels
    if qp is not None:
        index["queryPositions"] = [int(p) for p in qp]
    if kp is not None:
        index["keyPositions"] = [int(p) for p in kp]

    # Encode everything first, so that a value that overflows the stored dtype fails before
    # any file exists.
    files = []
    entries = []
    for i, p in enumerate(prepared):
        where = f"layer {i}"
        tensors = [("q", p.dtype, p.q.shape, _encode(p.q, p.dtype, f"{where}: q")),
                   ("k", p.dtype, p.k.shape, _encode(p.k, p.dtype, f"{where}: k"))]
        if p.sinks is not None:
            tensors.append(("sinks", "F32", p.sinks.shape, _encode(p.sinks, "F32", f"{where}: sinks")))
        if p.lse is not None:
            tensors.append(("lse", "F32", p.lse.shape, _encode(p.lse, "F32", f"{where}: lse")))
        files.append((layer_file_name(i), _safetensors_bytes(tensors)))
        entries.append({"file": layer_file_name(i), "heads": p.heads, "kvHeads": p.kv_heads, "headDim": p.head_dim,
                        "scale": float(p.scale), "causal": p.causal, "window": p.window, "softcap": p.softcap})
    index["layers"] = entries

    if os.path.lexists(folder):
        if not os.path.isdir(folder) or os.path.islink(folder):
            raise ValueError(f"{folder}: exists and is not a folder")
        if os.listdir(folder) and not os.path.isfile(os.path.join(folder, INDEX_NAME)):
            raise ValueError(f"{folder}: a non-empty folder that is not a Q/K dump; refusing to replace it")
    parent, name = os.path.split(folder)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{name}.writing-", dir=parent)
    try:
        for file_name, data in files:
            _write_file(os.path.join(staging, file_name), data)
        _write_file(os.path.join(staging, INDEX_NAME),
                    (json.dumps(index, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
        os.chmod(staging, 0o755)
        if os.path.lexists(folder):
            retired = tempfile.mkdtemp(prefix=f".{name}.replaced-", dir=parent)
            os.rename(folder, os.path.join(retired, name))
            os.rename(staging, folder)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def _read_safetensors(path: str) -> Dict[str, np.ndarray]:
    """Tensors of a safetensors file as float32 arrays (F32, F16 or BF16 only)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: header is not JSON ({e})") from None
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        dtype = t.get("dtype")
        if dtype not in _DTYPE_SIZES:
            raise ValueError(f"{path}: {name}: dtype {dtype} is not one of F32, F16, BF16")
        shape = [int(s) for s in t["shape"]]
        begin, end = (int(o) for o in t["data_offsets"])
        count = int(np.prod(shape)) if shape else 1
        if not 0 <= begin <= end <= len(body) or end - begin != count * _DTYPE_SIZES[dtype]:
            raise ValueError(f"{path}: {name}: data_offsets [{begin}, {end}] do not fit shape {shape} of {dtype}")
        raw = body[begin:end]
        if dtype == "F32":
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            a = _bf16_to_float32(np.frombuffer(raw, dtype="<u2"))
        out[name] = (a.reshape(shape), dtype)
    return out


def read_dump(path: Union[str, os.PathLike]) -> QkDump:
    """Reads a dump (its folder or its attnscope-qk.json) into numpy arrays.

    Each layer comes back as a QkLayer: q [Tq, H, hd] and k [Tk, KV, hd] as float32 (exact
    conversions of the stored values), sinks [H] / lse [H, Tq] or None, scale, causal, window
    (None when none), softcap, the stored dtype, and the dump's positions (None: 0..T-1).
    Checks the format, version, shapes and the index's facts against the files (ValueError).
    """
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path) if os.path.basename(path) == INDEX_NAME else path
    index_path = os.path.join(folder, INDEX_NAME)
    with open(index_path, "r", encoding="utf-8") as f:
        index = json.load(f)
    if index.get("format") != FORMAT or index.get("version") != VERSION:
        raise ValueError(f"{index_path}: format {index.get('format')!r} version {index.get('version')!r}, "
                         f"expected {FORMAT!r} version {VERSION}")
    layers = []
    for i, entry in enumerate(index.get("layers") or []):
        file_name = entry["file"]
        if os.path.basename(file_name) != file_name:
            raise ValueError(f"{index_path}: layers[{i}].file: '{file_name}' is not a file inside the folder")
        tensors = _read_safetensors(os.path.join(folder, file_name))
        for name in ("q", "k"):
            if name not in tensors:
                raise ValueError(f"{file_name}: tensor '{name}' is missing")
        (q, dtype), (k, _) = tensors["q"], tensors["k"]
        heads, kv, hd = entry["heads"], entry["kvHeads"], entry["headDim"]
        if q.ndim != 3 or q.shape[1:] != (heads, hd) or k.ndim != 3 or k.shape[1:] != (kv, hd):
            raise ValueError(f"{file_name}: q {list(q.shape)} / k {list(k.shape)} do not match heads {heads}, "
                             f"kvHeads {kv}, headDim {hd}")
        layers.append(QkLayer(q=q, k=k, scale=float(entry["scale"]), causal=bool(entry["causal"]),
                              window=entry.get("window") or None, softcap=entry.get("softcap"),
                              sinks=tensors["sinks"][0] if "sinks" in tensors else None,
                              lse=tensors["lse"][0] if "lse" in tensors else None, dtype=dtype, layout="thd"))
    if not layers:
        raise ValueError(f"{index_path}: layers: none")
    qp = _positions(index.get("queryPositions"), layers[0].q.shape[0], f"{index_path}: queryPositions")
    kp = _positions(index.get("keyPositions"), layers[0].k.shape[0], f"{index_path}: keyPositions")
    for layer in layers:
        layer.query_positions, layer.key_positions = qp, kp
    return QkDump(folder=folder, layers=layers, tokens=index.get("tokens"), key_tokens=index.get("keyTokens"),
                  query_positions=qp, key_positions=kp)


def _scores_and_mask(layer: QkLayer, head: int):
    q = np.asarray(layer.q, dtype=np.float64)
    k = np.asarray(layer.k, dtype=np.float64)
    heads, kv = q.shape[1], k.shape[1]
    if not 0 <= head < heads:
        raise ValueError(f"head {head} is outside 0..{heads - 1}")
    scale = layer.scale if layer.scale is not None else 1.0 / math.sqrt(q.shape[2])
    s = float(scale) * (q[:, head, :] @ k[:, head // (heads // kv), :].T)
    if layer.softcap is not None:
        s = layer.softcap * np.tanh(s / layer.softcap)
    qp = np.arange(q.shape[0]) if layer.query_positions is None else np.asarray(layer.query_positions)
    kp = np.arange(k.shape[0]) if layer.key_positions is None else np.asarray(layer.key_positions)
    allowed = np.ones(s.shape, dtype=bool)
    if layer.causal:
        allowed &= kp[None, :] <= qp[:, None]
    if layer.window:
        allowed &= kp[None, :] > qp[:, None] - layer.window
    sink = None if layer.sinks is None else float(np.asarray(layer.sinks, dtype=np.float64)[head])
    return s, allowed, sink


def weights(layer: QkLayer, head: int) -> np.ndarray:
    """The exact weights [Tq, Tk] (float64) of one head, straight from design.md's definition:
    softmax over allowed keys of scale * q . k (soft-capped), the sink in the normaliser. A row
    with no allowed key (and no sink) is all zeros. ``layer`` is a read_dump() layer (or any
    QkLayer with q [Tq, H, hd] and k [Tk, KV, hd] as numpy arrays)."""
    s, allowed, sink = _scores_and_mask(layer, head)
    masked = np.where(allowed, s, -np.inf)
    peak = masked.max(axis=1)
    if sink is not None:
        peak = np.maximum(peak, sink)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.where(allowed, np.exp(masked - peak[:, None]), 0.0)
    total = e.sum(axis=1)
    if sink is not None:
        total = total + np.exp(sink - peak)
    return np.divide(e, total[:, None], out=np.zeros_like(e), where=total[:, None] > 0)


def log_sum_exp(layer: QkLayer) -> np.ndarray:
    """The log-sum-exp of every row [H, Tq] (float64), sinks included: what a dump's ``lse``
    holds (-inf for a row with no allowed key and no sink)."""
    heads = np.asarray(layer.q).shape[1]
    out = np.empty((heads, np.asarray(layer.q).shape[0]))
    for h in range(heads):
        s, allowed, sink = _scores_and_mask(layer, h)
        masked = np.where(allowed, s, -np.inf)
        if sink is not None:
            masked = np.concatenate([masked, np.full((s.shape[0], 1), sink)], axis=1)
        peak = masked.max(axis=1)
        safe = np.where(np.isfinite(peak), peak, 0.0)
        with np.errstate(divide="ignore"):
            out[h] = safe + np.log(np.exp(masked - safe[:, None]).sum(axis=1))
    return out
