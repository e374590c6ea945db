#!/usr/bin/env python3
"""Writes a random-weight Qwen2 folder for tests/bench/bench_decoder.sh (not a fixture: ~1 GB, never
committed).

    /usr/bin/python3 tests/bench/make_random_decoder.py [OUT_DIR] [--tiny] [--seed N]

Default OUT_DIR: build/bench/qwen2.5-0.5b-random (under the repository root). The folder is shaped
like Qwen/Qwen2.5-0.5B as Hugging Face saves it: config.json with model_type qwen2, 24 layers, 896
wide, 14 query and 2 key/value heads of 64, MLP 4864, vocabulary 151936, q/k/v biases (o none), tied
embeddings (no lm_head tensor), rope_theta 1e6, rms_norm_eps 1e-6, no sliding window; one
model.safetensors in bfloat16 (round to nearest even), tensors named model.embed_tokens.weight,
model.layers.N.{input_layernorm,self_attn.{q,k,v,o}_proj,post_attention_layernorm,
mlp.{gate,up,down}_proj}.weight, model.norm.weight. The benches give ids, but a folder without a
tokenizer is refused (issue 24), so it also gets the Qwen-style byte-level BPE tokenizer.json and
tokenizer_config.json of tests/fixtures/make_decoder_fixtures.py (a few hundred tokens and Qwen's
<|endoftext|>, <|im_start|>, <|im_end|>; the embedding keeps all 151936 rows, as Qwen's does beyond
its tokenizer's 151665).

Weight scales are chosen so that the forward looks like a trained model's rather than a degenerate
one: inputs to every projection are RMS-normalised (~1 per element), q/k weights of standard
deviation 0.04 over 896 inputs give query/key elements of ~1.2 and scores q.k/8 of standard deviation
~1.4 (softmaxes neither uniform nor one-hot), q/k biases N(0, 0.3) as Qwen's large biases, the other
projections 0.02 (the Hub's initializer_range) so the residual stream grows slowly over 24 layers.

--tiny writes a small folder of the same family (2 layers, 64 wide, 4 query / 2 key/value heads of
16, MLP 128, vocabulary 512; same settings otherwise) for checking bench_decoder_torch.py against
`attnscope-cli model` in seconds. Needs numpy only; the file is written by hand (no safetensors
library), one tensor at a time, so memory stays near the largest tensor.
"""

import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures"))
from make_decoder_fixtures import SPECIALS, make_tokenizer, tokenizer_config  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

QWEN25_05B = dict(layers=24, width=896, heads=14, kv_heads=2, head_dim=64, mlp=4864, vocab=151936,
                  positions=32768)
TINY = dict(layers=2, width=64, heads=4, kv_heads=2, head_dim=16, mlp=128, vocab=512, positions=1024)


def config_json(s, bos, eos):
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "hidden_act": "silu",
        "hidden_size": s["width"],
        "initializer_range": 0.02,
        "intermediate_size": s["mlp"],
        "max_position_embeddings": s["positions"],
        "max_window_layers": s["layers"],
        "model_type": "qwen2",
        "num_attention_heads": s["heads"],
        "num_hidden_layers": s["layers"],
        "num_key_value_heads": s["kv_heads"],
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": s["positions"],
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.43.1",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": s["vocab"],
    }


def tensor_plan(s):
    """(name, shape, kind, scale) in file order; kind: normal, norm (1 + N(0, scale)) or bias."""
    d, H, G, hd, inner = s["width"], s["heads"], s["kv_heads"], s["head_dim"], s["mlp"]
    plan = [("model.embed_tokens.weight", (s["vocab"], d), "normal", 0.05)]
    for l in range(s["layers"]):
        g = "model.layers.%d." % l
        plan += [
            (g + "input_layernorm.weight", (d,), "norm", 0.1),
            (g + "self_attn.q_proj.weight", (H * hd, d), "normal", 0.04),
            (g + "self_attn.q_proj.bias", (H * hd,), "normal", 0.3),
            (g + "self_attn.k_proj.weight", (G * hd, d), "normal", 0.04),
            (g + "self_attn.k_proj.bias", (G * hd,), "normal", 0.3),
            (g + "self_attn.v_proj.weight", (G * hd, d), "normal", 0.02),
            (g + "self_attn.v_proj.bias", (G * hd,), "normal", 0.02),
            (g + "self_attn.o_proj.weight", (d, H * hd), "normal", 0.02),
            (g + "post_attention_layernorm.weight", (d,), "norm", 0.1),
            (g + "mlp.gate_proj.weight", (inner, d), "normal", 0.02),
            (g + "mlp.up_proj.weight", (inner, d), "normal", 0.02),
            (g + "mlp.down_proj.weight", (d, inner), "normal", 0.02),
        ]
    plan.append(("model.norm.weight", (d,), "norm", 0.1))
    return plan


def bf16_bytes(a32):
    """float32 array -> bfloat16 bytes, rounded to nearest even (as torch's .to(torch.bfloat16))."""
    bits = np.ascontiguousarray(a32, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return rounded.astype(np.uint16).tobytes()


def write_folder(out, s, seed):
    os.makedirs(out, exist_ok=True)
    plan = tensor_plan(s)
    header, offset = {}, 0
    for name, shape, _, _ in plan:
        n = 2 * int(np.prod(shape))
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    rng = np.random.default_rng(seed)
    path = os.path.join(out, "model.safetensors")
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, shape, kind, scale in plan:
            rows = shape[0]
            step = max(1, (1 << 24) // max(1, int(np.prod(shape[1:]))))  # ~16M values at a time
            for r in range(0, rows, step):
                part = (min(rows, r + step) - r,) + tuple(shape[1:])
                a = rng.standard_normal(part, dtype=np.float32) * np.float32(scale)
                if kind == "norm":
                    a += np.float32(1)
                f.write(bf16_bytes(a))
    os.replace(tmp, path)
    specials, bos, eos = SPECIALS["qwen"]
    tok_json, vocab = make_tokenizer(specials, bos, True)
    assert len(vocab) <= s["vocab"]
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(tok_json)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(tokenizer_config({t: vocab[t] for t in specials}, bos, eos))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config_json(s, vocab["<|endoftext|>"], vocab[eos]), f, indent=2)
        f.write("\n")
    return offset + 8 + len(text)


def main():
    args = sys.argv[1:]
    tiny = "--tiny" in args
    seed = 1
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    paths = [a for a in args if not a.startswith("--")]
    if len(paths) > 1 or any(a not in ("--tiny",) for a in args if a.startswith("--")):
        sys.exit("usage: make_random_decoder.py [OUT_DIR] [--tiny] [--seed N]")
    out = paths[0] if paths else os.path.join(ROOT, "build", "bench",
                                              "qwen2-tiny-random" if tiny else "qwen2.5-0.5b-random")
    s = TINY if tiny else QWEN25_05B
    size = write_folder(out, s, seed)
    print("wrote %s: qwen2, %d layers, width %d, %d/%d heads of %d, MLP %d, vocab %d, bf16, %.1f MiB" % (
        out, s["layers"], s["width"], s["heads"], s["kv_heads"], s["head_dim"], s["mlp"], s["vocab"],
        size / 1048576))


if __name__ == "__main__":
    main()
