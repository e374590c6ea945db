#!/usr/bin/python3
"""Checks a Marian folder written by train.py with a second, independent forward (numpy, float64).

Reads only the folder's files, as AttnScope's loader does: model.safetensors (parsed by hand),
config.json, generation_config.json, vocab.json and source.spm (pieces looked up in vocab.json,
then `</s>`), and writes the forward out from the semantics of transformers' modeling_marian.py
rather than reusing train.py's torch modules. For every sentence of examples.json it checks the
source ids and that greedy decoding (generate(num_beams=1)) gives the recorded output ids; prints
one line per sentence and exits 1 on any mismatch.

    resources/models/tiny-marian-en-zh/check_folder.py [FOLDER]     # a few seconds
"""

import json
import math
import pathlib
import struct
import sys

import numpy as np
import sentencepiece

FOLDER = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent)


def tensors(path):
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8: 8 + size])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", name
        begin, end = entry["data_offsets"]
        data = np.frombuffer(raw[8 + size + begin: 8 + size + end], dtype="<f4")
        out[name] = data.reshape(entry["shape"]).astype(np.float64)
    return out


W = tensors(FOLDER / "model.safetensors")
CONFIG = json.loads((FOLDER / "config.json").read_text(encoding="utf-8"))
GENERATION = json.loads((FOLDER / "generation_config.json").read_text(encoding="utf-8"))
VOCAB = json.loads((FOLDER / "vocab.json").read_text(encoding="utf-8"))
D, HEADS = CONFIG["d_model"], CONFIG["encoder_attention_heads"]
assert CONFIG["activation_function"] == "swish" and CONFIG["scale_embedding"]


def positions(count):
    angle = np.arange(count)[:, None] / np.power(10000, 2 * np.arange(D // 2)[None] / D)
    return np.concatenate([np.sin(angle), np.cos(angle)], 1).astype(np.float32).astype(np.float64)


def layer_norm(x, name):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * W[name + ".weight"] + W[name + ".bias"]


def linear(x, name):
    return x @ W[name + ".weight"].T + W[name + ".bias"]


def attention(x, memory, name, causal):
    size = D // HEADS
    def split(t):
        return t.reshape(len(t), HEADS, size).transpose(1, 0, 2)
    q = split(linear(x, name + ".q_proj") * size ** -0.5)
    k, v = split(linear(memory, name + ".k_proj")), split(linear(memory, name + ".v_proj"))
    scores = q @ k.transpose(0, 2, 1)
    if causal:
        scores = scores + np.triu(np.full((len(x), len(x)), -np.inf), 1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return linear((weights @ v).transpose(1, 0, 2).reshape(len(x), D), name + ".out_proj")


def feed_forward(h, name):
    inner = linear(h, name + ".fc1")
    return layer_norm(h + linear(inner / (1 + np.exp(-inner)), name + ".fc2"), name + ".final_layer_norm")


def embed(ids):
    return W["model.shared.weight"][ids] * math.sqrt(D) + positions(len(ids))


def encode(ids):
    h = embed(ids)
    for i in range(CONFIG["encoder_layers"]):
        name = "model.encoder.layers.%d" % i
        h = layer_norm(h + attention(h, h, name + ".self_attn", False), name + ".self_attn_layer_norm")
        h = feed_forward(h, name)
    return h


def next_logits(ids, memory):
    h = embed(ids)
    for i in range(CONFIG["decoder_layers"]):
        name = "model.decoder.layers.%d" % i
        h = layer_norm(h + attention(h, h, name + ".self_attn", True), name + ".self_attn_layer_norm")
        h = layer_norm(h + attention(h, memory, name + ".encoder_attn", False), name + ".encoder_attn_layer_norm")
        h = feed_forward(h, name)
    return h[-1] @ W["model.shared.weight"].T + W["final_logits_bias"][0]


def main():
    source = sentencepiece.SentencePieceProcessor(model_file=str(FOLDER / "source.spm"))
    start, eos = GENERATION["decoder_start_token_id"], GENERATION["eos_token_id"]
    banned = [ids[0] for ids in GENERATION["bad_words_ids"]]
    length = GENERATION["max_length"]
    failed = 0
    for example in json.loads((FOLDER / "examples.json").read_text(encoding="utf-8")):
        ids = [VOCAB.get(p, VOCAB["<unk>"]) for p in source.encode(example["source"], out_type=str)] + [VOCAB["</s>"]]
        memory, output = encode(np.array(ids)), [start]
        while len(output) < length and output[-1] != eos:
            logits = next_logits(np.array(output), memory)
            logits[banned] = -np.inf
            output.append(int(logits.argmax()) if len(output) < length - 1 else eos)
        same = ids == example["source_ids"] and output == example["output_ids"]
        failed += not same
        print("%s  %s -> %s" % ("ok  " if same else "FAIL", example["source"], example["translation"]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
