#!/usr/bin/python3
"""Times attnscope-cli's engine against PyTorch in the same run and prints the ratios.

PyTorch reference: nn.MultiheadAttention(need_weights=True, average_attn_weights=False),
i.e. every per-head weight matrix kept, as AttnScope keeps them. Both sides get the same
number of threads (all cores unless --threads), the same sizes and a warm-up run.

Usage: tests/bench/bench_attention.py [--cli build/release/bin/attnscope-cli]
       [--backends cpu,vulkan] [--repeat N] [--sizes teaching,inspection,large]
Needs Debian's python3-torch; not part of CI (tests never assert on time).
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

SIZES = {
    "teaching": dict(tokens=16, dim=64, heads=4, causal=False),
    "inspection": dict(tokens=1024, dim=512, heads=8, causal=True),
    "large": dict(tokens=2048, dim=1024, heads=16, causal=False),
    "long": dict(tokens=4096, dim=1024, heads=16, causal=True),
}


def torch_median_ms(size, repeat, threads):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    t, d, h = size["tokens"], size["dim"], size["heads"]
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True)
    x = torch.randn(1, t, d)
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1) if size["causal"] else None
    times = []
    with torch.no_grad():
        for i in range(repeat + 1):
            start = time.perf_counter()
            out, weights = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
            elapsed = (time.perf_counter() - start) * 1000.0
            assert weights.shape == (1, h, t, t)
            if i:
                times.append(elapsed)
    return statistics.median(times)


def cli_median_ms(cli, size, backend, repeat, threads):
    args = [cli, "bench", "--tokens", str(size["tokens"]), "--dim", str(size["dim"]), "--heads",
            str(size["heads"]), "--backend", backend, "--repeat", str(repeat)]
    if size["causal"]:
        args.append("--causal")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    run = subprocess.run(args, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        return None, run.stderr.strip()
    device = re.search(r"^device: (.*)$", run.stdout, re.M)
    median = re.search(r"^median_ms: ([0-9.]+)$", run.stdout, re.M)
    return float(median.group(1)), device.group(1) if device else "?"


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=str(root / "build/release/bin/attnscope-cli"))
    parser.add_argument("--backends", default="cpu")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--sizes", default="teaching,inspection,large")
    a = parser.parse_args()

    print(f"threads: {a.threads} (PyTorch and AttnScope alike)")
    print(f"{'size':<11} {'T':>5} {'d':>5} {'H':>3} {'mask':<7} {'backend':<8} {'ms':>9} {'torch ms':>9} {'speedup':>8}  device")
    for name in a.sizes.split(","):
        size = SIZES[name]
        ref = torch_median_ms(size, a.repeat, a.threads)
        for backend in a.backends.split(","):
            ms, device = cli_median_ms(a.cli, size, backend, a.repeat, a.threads)
            mask = "causal" if size["causal"] else "none"
            if ms is None:
                print(f"{name:<11} {size['tokens']:>5} {size['dim']:>5} {size['heads']:>3} {mask:<7} {backend:<8} "
                      f"{'failed':>9} {ref:9.3f} {'-':>8}  {device}")
                continue
            print(f"{name:<11} {size['tokens']:>5} {size['dim']:>5} {size['heads']:>3} {mask:<7} {backend:<8} "
                  f"{ms:9.3f} {ref:9.3f} {ref / ms:7.2f}x  {device}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
