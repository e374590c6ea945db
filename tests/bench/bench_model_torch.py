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


def forward(w, ids):
    t = ids.size(-1)
    bias = torch.tril(torch.ones((POS, POS), dtype=torch.bool)).view(1, 1, POS, POS)
    h = w["wte"][ids] + w["wpe"][torch.arange(t)]
    hidden, attentions = [], []
    for blk in w["h"]:
        hidden.append(h)
        a = torch.nn.functional.layer_norm(h, (D,), *blk["ln_1"], eps=1e-5)
        q, k, v = conv1d(a, *blk["c_attn"]).split(D, dim=2)
        split = lambda x: x.view(1, t, H, D // H).permute(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], (D // H) ** 0.5)
        causal = bias[:, :, :t, :t]
        scores = torch.where(causal, scores, torch.full([], torch.finfo(scores.dtype).min))
        weights = torch.nn.functional.softmax(scores, dim=-1)
        attentions.append(weights)
        ctx = torch.matmul(weights, v).permute(0, 2, 1, 3).contiguous().view(1, t, D)
        h = h + conv1d(ctx, *blk["c_proj"])
        m = torch.nn.functional.layer_norm(h, (D,), *blk["ln_2"], eps=1e-5)
        h = h + conv1d(gelu_new(conv1d(m, *blk["c_fc"])), *blk["mlp_proj"])
    h = torch.nn.functional.layer_norm(h, (D,), *w["ln_f"], eps=1e-5)
    hidden.append(h)
    return attentions, hidden


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
