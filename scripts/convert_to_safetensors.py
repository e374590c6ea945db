#!/usr/bin/python3
"""Converts a model folder's pytorch_model.bin into model.safetensors, beside it.

AttnScope reads weights only from safetensors: a PyTorch pickle can run code when it is loaded,
so the application never opens one. Older Hugging Face folders (many of Helsinki-NLP's opus-mt
translation models among them) ship only pytorch_model.bin; this script converts such a folder
once, on a machine where you trust the file, with nothing but Debian's python3-torch:

    apt-get install python3-torch
    python3 scripts/convert_to_safetensors.py MODEL_DIR

It loads the pickle with torch.load(weights_only=True) (tensors only, no code), keeps every
tensor's name, shape and dtype (float32, float16 or bfloat16; other dtypes are refused), writes
each tensor once even where the checkpoint shares storage between names (transformers' tied
embeddings), and writes model.safetensors atomically (a temporary file renamed over it). An
existing model.safetensors is left alone unless --force is given.
"""

import json
import os
import struct
import sys
import tempfile

import torch

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: its bits as int16
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def convert(folder, force=False):
    source = os.path.join(folder, "pytorch_model.bin")
    target = os.path.join(folder, "model.safetensors")
    if not os.path.exists(source):
        sys.exit(f"{source}: no such file")
    if os.path.exists(target) and not force:
        sys.exit(f"{target}: already there (give --force to replace it)")
    state = torch.load(source, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        sys.exit(f"{source}: expected a dictionary of tensors (a state_dict)")
    header, blobs, offset = {}, [], 0
    for name in sorted(state):
        t = state[name]
        if not isinstance(t, torch.Tensor):
            sys.exit(f"{source}: {name}: not a tensor")
        if t.dtype not in DTYPES:
            sys.exit(f"{source}: {name}: dtype {t.dtype} is not float32, float16 or bfloat16")
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".model.safetensors.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(struct.pack("<Q", len(text)))
            out.write(text)
            for blob in blobs:
                out.write(blob)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    print(f"wrote {target}: {len(state)} tensors, {offset} bytes of weights")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--force"]
    if len(args) != 1:
        sys.exit("usage: python3 scripts/convert_to_safetensors.py MODEL_DIR [--force]")
    convert(args[0], force="--force" in sys.argv[1:])
