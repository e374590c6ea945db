#!/usr/bin/env python3
"""PyTorch eager forward of a Qwen2 folder (not a test: it prints figures), for bench_decoder.sh.

    /usr/bin/python3 tests/bench/bench_decoder_torch.py --model DIR --tokens T [--repeat N] [--threads N]
    /usr/bin/python3 tests/bench/bench_decoder_torch.py --model DIR --ids 1,2,3 --check OUT_DIR

The weights are read from the folder's safetensors by hand (model.safetensors, or the shards of
model.safetensors.index.json) and converted to float32 once at load, as transformers does on the CPU
with torch_dtype=float32. The forward is transformers' Qwen2Model (modeling_qwen2.py, eager
attention, eval mode, batch of one, no cache) with output_attentions and output_hidden_states, so
every layer's attention [1, H, T, T] and hidden state is kept, written out in torch because
transformers is not installed here:
  RMSNorm in float32 (x * rsqrt(mean x^2 + eps) * w); q/k/v Linear with bias, o without; RoPE from
  Qwen2RotaryEmbedding (inv_freq in float32, cos/sin of cat(freqs, freqs) times attention_scaling;
  yarn and the other rope types from tests/fixtures/decoder_reference.py); repeat_kv; scores =
  q k^T * head_dim^-0.5 plus the additive causal (and sliding-window) mask of float32 min; softmax in
  float32; o_proj; residual; post_attention_layernorm; down(silu(gate(x)) * up(x)); residual; the
  hidden states are the embedding output, each layer's output but the last, and the final norm's.
No LM head (Qwen2Model, not Qwen2ForCausalLM): `attnscope-cli bench --model` does not compute logits.

Timing mode: ids are the same pseudo-random spread over the vocabulary as `attnscope-cli bench
--model` (its 64-bit LCG), one untimed warm-up then --repeat timed forwards (default 3); prints
`T=…: median_ms M, min_ms m (N runs), peak_rss_mib R` (the process's peak, load included).
torch.set_num_threads(--threads, default $THREADS or 2).

Check mode: runs the forward on --ids and compares with `attnscope-cli model DIR --ids … --out
OUT_DIR` (attentions.npy within 1e-4, hidden_states.npy within 1e-3 (1 + |torch|)); prints the largest
differences and exits 1 when either is exceeded, so the bench compares the same computation.
"""

import json
import os
import resource
import statistics
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures"))
from decoder_reference import inv_freq_for, resolve  # noqa: E402

DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def read_safetensors(path, out):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            f.seek(base + start)
            buf = bytearray(f.read(end - start))
            t = torch.frombuffer(buf, dtype=DTYPES[info["dtype"]]) if buf else torch.empty(0)
            out[name] = t.to(torch.float32).reshape(info["shape"])  # converted once, at load
            del buf, t


def load(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    if config.get("model_type") not in ("qwen2", "qwen3", "llama"):
        sys.exit("bench_decoder_torch.py: %s: model_type %r, only qwen2, qwen3 and llama are written here" % (
            model_dir, config.get("model_type")))
    tensors = {}
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
    else:
        shards = ["model.safetensors"]
    for shard in shards:
        read_safetensors(os.path.join(model_dir, shard), tensors)
    p = {k[len("model."):] if k.startswith("model.") else k: v for k, v in tensors.items()}
    return resolve(config), p


def rope_inv_freq(rope, dim, max_pos, T):
    if rope["rope_type"] == "default":  # Qwen2RotaryEmbedding / _compute_default_rope_parameters
        base = rope["rope_theta"]
        return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0
    inv, att = inv_freq_for(rope, dim, max_pos, T)
    return torch.from_numpy(inv).float(), att


def rms_norm(x, w, eps):
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(s, p, ids, cache=None, keep=True):
    """Qwen2Model(input_ids, output_attentions=True, output_hidden_states=True): attentions, hidden.

    With a cache (new_cache()), the ids follow the cached tokens, as transformers' DynamicCache
    runs them: each layer's keys (after RoPE) and values, before repeat_kv, are concatenated
    (torch.cat) to the cached ones and the mask has a row per new id over every key. keep=False
    keeps neither attentions nor hidden states: hidden is then only the final norm's output."""
    T, H, G, hd, eps = ids.shape[-1], s["H"], s["G"], s["hd"], s["eps"]
    first = cache["length"] if cache is not None else 0
    total = first + T
    position_ids = torch.arange(first, total)[None]
    h = F.embedding(ids, p["embed_tokens.weight"])
    # masks: [1, 1, T, total] float, 0 where allowed, float32 min elsewhere (masking_utils for eager)
    qi, kj = torch.arange(first, total)[:, None], torch.arange(total)[None, :]
    masks, tables = {}, {}
    hidden, attentions = [], []
    bias = lambda name: p.get(name) if s["qkv_bias"] else None
    for l in range(s["L"]):
        window = s["windows"][l]
        if window not in masks:
            allowed = kj <= qi
            if window is not None:
                allowed = allowed & (kj > qi - window)
            masks[window] = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None, None]
        key = json.dumps(s["ropes"][l], sort_keys=True)
        if key not in tables:
            inv, att = rope_inv_freq(s["ropes"][l], hd, s["max_pos"], total)
            freqs = (inv[None, :, None].float() @ position_ids[:, None, :].float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            tables[key] = ((emb.cos() * att)[:, None], (emb.sin() * att)[:, None])
        cos, sin = tables[key]
        g = "layers.%d." % l
        if keep:
            hidden.append(h)
        residual = h
        x = rms_norm(h, p[g + "input_layernorm.weight"], eps)
        q = F.linear(x, p[g + "self_attn.q_proj.weight"], bias(g + "self_attn.q_proj.bias")).view(1, T, H, hd)
        k = F.linear(x, p[g + "self_attn.k_proj.weight"], bias(g + "self_attn.k_proj.bias")).view(1, T, G, hd)
        v = F.linear(x, p[g + "self_attn.v_proj.weight"], bias(g + "self_attn.v_proj.bias")).view(1, T, G, hd)
        if s["qk_norm"]:  # Qwen3Attention: q_norm / k_norm per head, before the transpose and RoPE
            q = rms_norm(q, p[g + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, p[g + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if cache is not None:
            if first:
                k = torch.cat((cache["k"][l], k), dim=2)
                v = torch.cat((cache["v"][l], v), dim=2)
            cache["k"][l], cache["v"][l] = k, v
        rep = H // G  # repeat_kv
        k = k[:, :, None].expand(1, G, rep, total, hd).reshape(1, H, total, hd)
        v = v[:, :, None].expand(1, G, rep, total, hd).reshape(1, H, total, hd)
        scores = torch.matmul(q, k.transpose(2, 3)) * s["scaling"]
        scores = scores + masks[window]
        weights = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        if keep:
            attentions.append(weights)
        ctx = torch.matmul(weights, v).transpose(1, 2).contiguous().reshape(1, T, H * hd)
        o_bias = p.get(g + "self_attn.o_proj.bias") if s["o_bias"] else None
        h = residual + F.linear(ctx, p[g + "self_attn.o_proj.weight"], o_bias)
        residual = h
        m = rms_norm(h, p[g + "post_attention_layernorm.weight"], eps)
        h = residual + F.linear(F.silu(F.linear(m, p[g + "mlp.gate_proj.weight"])) * F.linear(
            m, p[g + "mlp.up_proj.weight"]), p[g + "mlp.down_proj.weight"])
    hidden.append(rms_norm(h, p["norm.weight"], eps))
    if cache is not None:
        cache["length"] = total
    return attentions, hidden


def new_cache(s):
    """An empty key/value cache for forward(): per layer k, v [1, G, T, hd]."""
    return {"length": 0, "k": [None] * s["L"], "v": [None] * s["L"]}


def lm_head(s, p):
    """Qwen2ForCausalLM's lm_head: the embedding when tie_word_embeddings."""
    return p["embed_tokens.weight"] if s["tie"] else p["lm_head.weight"]


def bench_ids(T, vocab):
    """The ids `attnscope-cli bench --model` reads (app/cli/ModelCommands.cpp)."""
    state, ids, mask = 0x9E3779B97F4A7C15, [], (1 << 64) - 1
    for _ in range(T):
        state = (state * 6364136223846793005 + 1442695040888963407) & mask
        ids.append((state >> 33) % vocab)
    return ids


def option(args, name, default=None):
    if name in args:
        i = args.index(name)
        if i + 1 >= len(args):
            sys.exit("bench_decoder_torch.py: %s needs a value" % name)
        return args[i + 1]
    return default


def main():
    args = sys.argv[1:]
    model_dir = option(args, "--model")
    if not model_dir:
        sys.exit(__doc__)
    torch.set_num_threads(int(option(args, "--threads", os.environ.get("THREADS", "2"))))
    s, p = load(model_dir)
    with torch.no_grad():
        if option(args, "--check"):
            ids = [int(x) for x in option(args, "--ids", "").replace(" ", "").split(",")]
            attentions, hidden = forward(s, p, torch.tensor(ids)[None])
            att = torch.cat(attentions).numpy()  # [L, H, T, T]
            hid = torch.cat(hidden).numpy()  # [L+1, T, d]
            out = option(args, "--check")
            theirs_att = np.load(os.path.join(out, "attentions.npy"))
            theirs_hid = np.load(os.path.join(out, "hidden_states.npy"))
            if theirs_att.shape != att.shape or theirs_hid.shape != hid.shape:
                sys.exit("shapes differ: attentions %s vs %s, hidden %s vs %s" % (
                    theirs_att.shape, att.shape, theirs_hid.shape, hid.shape))
            da = float(np.abs(theirs_att - att).max())
            dh = float((np.abs(theirs_hid - hid) / (1 + np.abs(hid))).max())
            ok = da <= 1e-4 and dh <= 1e-3
            print("check %s: T=%d, max |attention diff| %.3g (limit 1e-4), max |hidden diff|/(1+|h|) %.3g "
                  "(limit 1e-3), attention row max mean %.3f: %s" % (
                      model_dir, len(ids), da, dh, float(att.max(-1).mean()), "ok" if ok else "FAILED"))
            sys.exit(0 if ok else 1)
        lengths = [int(t) for t in option(args, "--tokens", "256").split(",")]
        repeat = int(option(args, "--repeat", "3"))
        print("model: %s, %d layers x %d heads (%d key/value), width %d; torch %s eager, float32, %d threads" % (
            s["model_type"], s["L"], s["H"], s["G"], s["d"], torch.__version__, torch.get_num_threads()))
        sys.stdout.flush()
        for T in lengths:
            ids = torch.tensor(bench_ids(T, s["vocab"]))[None]
            times = []
            for r in range(repeat + 1):  # run 0 warms caches and allocators
                start = time.perf_counter()
                attentions, hidden = forward(s, p, ids)
                ms = (time.perf_counter() - start) * 1000
                del attentions, hidden
                if r:
                    times.append(ms)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print("T=%d: median_ms %.1f, min_ms %.1f (%d runs), peak_rss_mib %.1f" % (
                T, statistics.median(times), min(times), repeat, peak))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
