#!/usr/bin/python3
"""Times attnscope-cli's engine against PyTorch and against the machine's limit, in one run.

PyTorch reference: nn.MultiheadAttention(need_weights=True, average_attn_weights=False),
i.e. every per-head weight matrix kept, as AttnScope keeps them. Both sides get the same
number of threads, the same sizes and a warm-up run; PyTorch runs in a process of its own
per row, so its peak memory (ru_maxrss) is its own.

The limit: the engine's GEMM FLOPs (four projections, Q·Kᵀ in full, weights·V over the keys a
row may see) at the OpenBLAS rate, plus writing the maps the trace keeps (scores and weights,
2·H·T·T floats) at the memory's write rate, both measured here in the same run and with the
same thread count (the rate: the best of torch.mm on a few GEMM shapes; the write rate:
filling a 256 MiB tensor that is already mapped).

Debian's OpenBLAS 0.3.21 does not know this project's CPU (Xeon, family 6 model 207) and falls
back to its 2004 Prescott kernels, 5x slower. AttnScope's engine asks for the kernels the CPU
supports (core/Gemm.h); PyTorch is given the same (OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS),
so that it is compared at its best; --torch-default-blas leaves its environment alone.

Usage: tests/bench/bench_attention.py [--cli build/ci/bin/attnscope-cli] [--repeat N]
       [--tokens 256,1024,2048] [--threads 1,2] [--dim 512] [--heads 8] [--backends cpu]
Needs Debian's python3-torch; not part of CI (tests never assert on time). docs/performance.md
explains the figures.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time


def torch_worker(args):
    """Runs in its own process: times PyTorch on one size, measures the limit's two rates."""
    import resource

    import torch

    t, d, h, causal, threads, repeat = args.worker
    t, d, h, threads, repeat, causal = int(t), int(d), int(h), int(threads), int(repeat), causal == "causal"
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True)
    x = torch.randn(1, t, d)
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1) if causal else None
    times, cpu_times = [], []
    with torch.no_grad():
        for i in range(repeat + 1):
            start, cpu_start = time.perf_counter(), time.process_time()
            out, weights = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
            elapsed, cpu = (time.perf_counter() - start) * 1000.0, (time.process_time() - cpu_start) * 1000.0
            assert weights.shape == (1, h, t, t)
            del out, weights
            if i:
                times.append(elapsed)
                cpu_times.append(cpu)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    # The OpenBLAS rate: the best of the GEMM shapes the engine runs (projection, scores,
    # weights·V) and a square one.
    # Each rate twice: per second of wall time and per second of CPU time (all threads).
    rate, cpu_rate = 0.0, 0.0
    for m, k, n in ((2048, 512, 512), (256, 64, 2048), (256, 2048, 64), (1024, 1024, 1024)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        c = a @ b
        runs = [_seconds(lambda: torch.mm(a, b, out=c)) for _ in range(5)]
        rate = max(rate, 2.0 * m * k * n / min(r[0] for r in runs))
        cpu_rate = max(cpu_rate, 2.0 * m * k * n / min(r[1] for r in runs))
    # The write rate into memory that is already mapped, as a recycled trace is.
    buf = torch.empty(64 << 20)
    buf.fill_(1.0)
    runs = [_seconds(lambda: buf.fill_(2.0)) for _ in range(5)]
    write, cpu_write = buf.numel() * 4 / min(r[0] for r in runs), buf.numel() * 4 / min(r[1] for r in runs)
    print(json.dumps(dict(ms=statistics.median(times), cpu_ms=statistics.median(cpu_times), peak_mib=peak_mib,
                          gflops=rate / 1e9, write_gbs=write / 1e9, cpu_gflops=cpu_rate / 1e9,
                          cpu_write_gbs=cpu_write / 1e9)))


def _seconds(fn):
    """(wall seconds, CPU seconds of the whole process) that fn takes."""
    start, cpu_start = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, max(time.process_time() - cpu_start, 1e-9)


def run_torch(size, threads, repeat, kernels):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if kernels:
        env.update(OPENBLAS_CORETYPE=kernels, OPENBLAS_NUM_THREADS=str(threads))
    args = [sys.executable, __file__, "--worker", str(size["tokens"]), str(size["dim"]), str(size["heads"]),
            "causal" if size["causal"] else "none", str(threads), str(repeat)]
    run = subprocess.run(args, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit("PyTorch worker failed: " + run.stderr.strip()[-2000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def run_cli(cli, size, backend, repeat, threads):
    args = [cli, "bench", "--tokens", str(size["tokens"]), "--dim", str(size["dim"]), "--heads",
            str(size["heads"]), "--backend", backend, "--repeat", str(repeat)]
    if size["causal"]:
        args.append("--causal")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    stdout = proc.stdout.read()
    # wait4: this child's own peak RSS (an older attnscope-cli does not print it).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return None
    fields = dict(re.findall(r"^(\w+): (.*)$", stdout, re.M))
    t, d, h = size["tokens"], size["dim"], size["heads"]
    # The same counts attnscope-cli prints (gemm_flops, map_bytes), for builds that do not.
    flops = 8.0 * t * d * d + 2.0 * t * t * d * (1.5 if size["causal"] else 2.0)
    return dict(ms=float(fields["median_ms"]), cpu_ms=float(fields.get("median_cpu_ms", "nan")), flops=float(fields.get("gemm_flops", flops)),
                bytes=float(fields.get("map_bytes", 2.0 * h * t * t * 4)), peak_mib=usage.ru_maxrss / 1024.0,
                device=fields.get("device", "?"))


def baseline_columns(a, size, backend, threads, ref, limit):
    if not a.baseline_cli:
        return ""
    base = run_cli(a.baseline_cli, size, backend, a.repeat, threads)
    if base is None:
        return "   failed"
    return f"  {base['ms']:7.1f} {base['ms'] / ref['ms']:6.2f} {base['ms'] / limit:6.2f} {base['peak_mib']:5.0f}"


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=str(root / "build/ci/bin/attnscope-cli"))
    parser.add_argument("--backends", default="cpu")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--tokens", default="256,1024,2048")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--torch-default-blas", action="store_true")
    parser.add_argument("--baseline-cli", help="another attnscope-cli (an older build) timed in the same row")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.worker:
        return torch_worker(a)

    print(f"d = {a.dim}, H = {a.heads}, median of {a.repeat} runs after a warm-up; ratios below 1 favour AttnScope")
    print(f"{'T':>5} {'mask':<6} {'thr':>3} {'ms':>7} {'torch':>7} {'/torch':>6} {'limit':>7} {'/limit':>6} "
          f"{'cpu ms':>7} {'torch':>7} {'/torch':>6} {'limit':>7} {'/limit':>6} {'MiB':>5} {'torch':>5}" +
          (f"  {'base ms':>7} {'/torch':>6} {'/limit':>6} {'MiB':>5}" if a.baseline_cli else ""))
    devices, rates = set(), []
    for threads in [int(x) for x in a.threads.split(",")]:
        for tokens in [int(x) for x in a.tokens.split(",")]:
            for causal in (False, True):
                size = dict(tokens=tokens, dim=a.dim, heads=a.heads, causal=causal)
                for backend in a.backends.split(","):
                    ours = run_cli(a.cli, size, backend, a.repeat, threads)
                    mask = "causal" if causal else "none"
                    if ours is None:
                        print(f"{tokens:>5} {mask:<6} {threads:>3} {backend:<7} {'failed':>8}")
                        continue
                    devices.add(ours["device"])
                    kernels = None
                    found = re.search(r"\((\w+) kernels\)", ours["device"])
                    if found and not a.torch_default_blas:
                        kernels = found.group(1)
                    ref = run_torch(size, threads, a.repeat, kernels)
                    limit = ours["flops"] / (ref["gflops"] * 1e9) * 1e3 + ours["bytes"] / (ref["write_gbs"] * 1e9) * 1e3
                    cpu_limit = (ours["flops"] / (ref["cpu_gflops"] * 1e9) * 1e3 +
                                 ours["bytes"] / (ref["cpu_write_gbs"] * 1e9) * 1e3)
                    print(f"{tokens:>5} {mask:<6} {threads:>3} {ours['ms']:7.1f} {ref['ms']:7.1f} "
                          f"{ours['ms'] / ref['ms']:6.2f} {limit:7.1f} {ours['ms'] / limit:6.2f} "
                          f"{ours['cpu_ms']:7.1f} {ref['cpu_ms']:7.1f} {ours['cpu_ms'] / ref['cpu_ms']:6.2f} "
                          f"{cpu_limit:7.1f} {ours['cpu_ms'] / cpu_limit:6.2f} "
                          f"{ours['peak_mib']:5.0f} {ref['peak_mib']:5.0f}" + baseline_columns(a, size, backend, threads, ref, limit))
                    rates.append((threads, ref["gflops"], ref["write_gbs"], ref["cpu_gflops"], ref["cpu_write_gbs"]))
                    sys.stdout.flush()
    print("ms: median wall time; cpu ms: median CPU time of the whole process (all threads), what the wall time "
          "would be alone on one thread; /torch, /limit: AttnScope's time over PyTorch's and over the limit; "
          "MiB: peak resident memory")
    for threads in sorted({r[0] for r in rates}):
        mine = [r for r in rates if r[0] == threads]
        print(f"limit's rates on {threads} thread(s): GEMM {min(r[1] for r in mine):.0f}-{max(r[1] for r in mine):.0f} "
              f"GFLOP/s, writes {min(r[2] for r in mine):.1f}-{max(r[2] for r in mine):.1f} GB/s per wall second; "
              f"{min(r[3] for r in mine):.0f}-{max(r[3] for r in mine):.0f} GFLOP/s, "
              f"{min(r[4] for r in mine):.1f}-{max(r[4] for r in mine):.1f} GB/s per CPU second")
    print("AttnScope: " + "; ".join(sorted(devices)))
    print("PyTorch: OpenBLAS kernels " + ("as it picks them" if a.torch_default_blas else "as AttnScope's engine") +
          "; GFLOP/s and GB/s: the limit's rates, measured with that PyTorch at that thread count")


if __name__ == "__main__":
    main()
