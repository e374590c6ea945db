#!/usr/bin/env python3
"""PyTorch eager on the shapes of tests/bench/bench_model.cpp (not a test: it prints figures).

A GPT-2-small-shaped model (12 layers, 768 wide, 12 heads, 3072-wide MLP, 50257 tokens, 1024
positions) with random weights, run the way transformers' GPT2Model runs eagerly
(modeling_gpt2.py: Conv1D as addmm, pre-LN blocks, gelu_new, causal softmax in float32) with
output_attentions and output_hidden_states: every attention and hidden state is kept. Written
out in torch because transformers itself is not installed here; the operations are the same.

    python3 tests/bench/bench_model_torch.py [T ...]      (default: 128 1024)

Compare its median_ms with bench_model's, run on the same machine with the same threads
(OMP_NUM_THREADS applies to both).
"""

import math
import resource
import statistics
import sys
import time

import torch

L, D, H, INNER, VOCAB, POS = 12, 768, 12, 3072, 50257, 1024


def conv1d(x, w, b):
    return torch.addmm(b, x.view(-1, x.size(-1)), w).view(*x.shape[:-1], w.size(-1))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def make_weights(gen):
    r = lambda *shape, s: torch.rand(*shape, generator=gen) * (2 * s) - s
    w = {"wte": r(VOCAB, D, s=0.1), "wpe": r(POS, D, s=0.05), "ln_f": (1 + r(D, s=0.1), r(D, s=0.05)), "h": []}
    for _ in range(L):
        w["h"].append({"ln_1": (1 + r(D, s=0.1), r(D, s=0.05)), "ln_2": (1 + r(D, s=0.1), r(D, s=0.05)),
                       "c_attn": (r(D, 3 * D, s=0.1), r(3 * D, s=0.02)), "c_proj": (r(D, D, s=0.05), r(D, s=0.02)),
                       "c_fc": (r(D, INNER, s=0.05), r(INNER, s=0.02)), "mlp_proj": (r(INNER, D, s=0.03), r(D, s=0.02))})
    return w


def forward(w, ids, heads=H, eps=1e-5, cache=None, keep=True):
    """GPT2Model with output_attentions and output_hidden_states: attentions, hidden. With a cache
    (new_cache()), the ids follow the cached tokens as transformers' cache runs them: each
    layer's keys and values concatenated (torch.cat) to the cached ones, positions and the causal
    mask from there. keep=False keeps neither: hidden is then only ln_f's output."""
    t, d = ids.size(-1), w["wte"].size(1)
    first = cache["length"] if cache is not None else 0
    total = first + t
    causal = (torch.arange(total)[None, :] <= torch.arange(first, total)[:, None]).view(1, 1, t, total)
    h = w["wte"][ids] + w["wpe"][torch.arange(first, total)]
    hidden, attentions = [], []
    for l, blk in enumerate(w["h"]):
        if keep:
            hidden.append(h)
        a = torch.nn.functional.layer_norm(h, (d,), *blk["ln_1"], eps=eps)
        q, k, v = conv1d(a, *blk["c_attn"]).split(d, dim=2)
        split = lambda x: x.view(1, t, heads, d // heads).permute(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        if cache is not None:
            if first:
                k, v = torch.cat((cache["k"][l], k), dim=-2), torch.cat((cache["v"][l], v), dim=-2)
            cache["k"][l], cache["v"][l] = k, v
        scores = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], (d // heads) ** 0.5)
        scores = torch.where(causal, scores, torch.full([], torch.finfo(scores.dtype).min))
        weights = torch.nn.functional.softmax(scores, dim=-1)
        if keep:
            attentions.append(weights)
        ctx = torch.matmul(weights, v).permute(0, 2, 1, 3).contiguous().view(1, t, d)
        h = h + conv1d(ctx, *blk["c_proj"])
        m = torch.nn.functional.layer_norm(h, (d,), *blk["ln_2"], eps=eps)
        h = h + conv1d(gelu_new(conv1d(m, *blk["c_fc"])), *blk["mlp_proj"])
    h = torch.nn.functional.layer_norm(h, (d,), *w["ln_f"], eps=eps)
    hidden.append(h)
    if cache is not None:
        cache["length"] = total
    return attentions, hidden


def new_cache(layers):
    """An empty key/value cache for forward(): per layer k, v [1, H, T, hd]."""
    return {"length": 0, "k": [None] * layers, "v": [None] * layers}


def load(tensors):
    """The weights of forward() from a GPT-2 folder's tensors (float32, names with or without
    "transformer."), as make_weights lays them out."""
    t = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in tensors.items()}
    pair = lambda name: (t[name + ".weight"], t[name + ".bias"])
    w = {"wte": t["wte.weight"], "wpe": t["wpe.weight"], "ln_f": pair("ln_f"), "h": []}
    layer = 0
    while "h.%d.ln_1.weight" % layer in t:
        g = "h.%d." % layer
        w["h"].append({"ln_1": pair(g + "ln_1"), "ln_2": pair(g + "ln_2"), "c_attn": pair(g + "attn.c_attn"),
                       "c_proj": pair(g + "attn.c_proj"), "c_fc": pair(g + "mlp.c_fc"),
                       "mlp_proj": pair(g + "mlp.c_proj")})
        layer += 1
    return w


def main():
    lengths = [int(a) for a in sys.argv[1:]] or [128, 1024]
    w = make_weights(torch.Generator().manual_seed(1))
    print("model: GPT-2 small shape, random weights; torch %s eager, %d threads" % (torch.__version__,
                                                                                  torch.get_num_threads()))
    with torch.no_grad():
        for t in lengths:
            ids = (torch.arange(t) * 7919 % VOCAB).view(1, t)
            runs = 5 if t <= 256 else 3
            times = []
            for r in range(runs + 1):
                start = time.perf_counter()
                attentions, hidden = forward(w, ids)
                ms = (time.perf_counter() - start) * 1000
                if r:
                    times.append(ms)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print("T=%d: median_ms %.1f, min_ms %.1f (%d runs), peak_rss_mib %.1f" % (
                t, statistics.median(times), min(times), runs, peak))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
