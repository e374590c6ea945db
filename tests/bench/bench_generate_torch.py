#!/usr/bin/env python3
"""PyTorch eager greedy generation with a key/value cache (not a test: it prints figures), for
bench_generate.sh.

    /usr/bin/python3 tests/bench/bench_generate_torch.py --model DIR --tokens T --generate N [--repeat R]
                                                         [--threads N]
    /usr/bin/python3 tests/bench/bench_generate_torch.py --model DIR --check OUT_DIR
    /usr/bin/python3 tests/bench/bench_generate_torch.py --model DIR --tokens T --print-ids

The loop transformers' generate() runs for greedy search, written out because transformers is not
installed here: the prompt's forward fills a cache and its last row's logits give the first new
token (argmax); then each of N steps feeds that one token, with every layer's cached keys and values
(after RoPE, before repeat_kv) concatenated with torch.cat, and takes the argmax of its logits. The
logits are the LM head of the last row (the embedding where tie_word_embeddings; GPT-2's wte).
The forward is that of bench_decoder_torch.py for Qwen2, Qwen3 (q/k norms) and Llama folders and
of bench_model_torch.py for GPT-2, on the folder's weights converted to float32 once at load; eager
attention computes every step's weights as the benchmark forwards do, but keeps none.

Timing mode: the prompt is the same pseudo-random ids as `attnscope-cli bench --model --tokens T`;
one untimed warm-up then --repeat (default 3) timed generations; prints `T=… N=…: prefill_ms P,
decode_tokens_per_s X, median over R runs, peak_rss_mib M` as `attnscope-cli bench --model
--generate N` does (prefill: the prompt's forward up to the first new token; decode: the N steps).

Check mode: reads OUT_DIR/tokens.json of `attnscope-cli generate DIR --ids … --max-new-tokens N
--out OUT_DIR`, generates as many tokens after its prompt here, and exits 1 when any id differs.
--print-ids prints the timing mode's prompt as `--ids` takes it.
"""

import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_decoder_torch as decoder  # noqa: E402
import bench_model_torch as gpt2  # noqa: E402


class Model:
    """A folder's weights with one forward step (ids after a cache) giving the last row's logits."""

    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            config = json.load(f)
        self.kind = config.get("model_type")
        if self.kind == "gpt2":
            act = config.get("activation_function", "gelu_new")
            if act != "gelu_new":
                sys.exit("bench_generate_torch.py: %s: activation_function %r, only gelu_new is written here" % (
                    model_dir, act))
            tensors = {}
            decoder.read_safetensors(os.path.join(model_dir, "model.safetensors"), tensors)
            self.w = gpt2.load(tensors)
            self.heads, self.eps = config["n_head"], config.get("layer_norm_epsilon", 1e-5)
            self.layers, self.vocab = len(self.w["h"]), config["vocab_size"]
            self.head = self.w["wte"]
            self.describe = "gpt2, %d layers x %d heads, width %d" % (self.layers, self.heads, self.w["wte"].size(1))
        else:
            self.s, self.p = decoder.load(model_dir)
            self.layers, self.vocab = self.s["L"], self.s["vocab"]
            self.head = decoder.lm_head(self.s, self.p)
            self.describe = "%s, %d layers x %d heads (%d key/value), width %d" % (
                self.s["model_type"], self.s["L"], self.s["H"], self.s["G"], self.s["d"])

    def new_cache(self):
        return gpt2.new_cache(self.layers) if self.kind == "gpt2" else decoder.new_cache(self.s)

    def step(self, ids, cache):
        """The next-token logits after ids (a list), the cache extended by them."""
        ids = torch.tensor(ids)[None]
        if self.kind == "gpt2":
            _, hidden = gpt2.forward(self.w, ids, self.heads, self.eps, cache=cache, keep=False)
        else:
            _, hidden = decoder.forward(self.s, self.p, ids, cache=cache, keep=False)
        return F.linear(hidden[-1][:, -1], self.head)[0]


def generate(model, prompt, new_tokens, on_first=None):
    """Greedy: the first new token from the prompt's forward, then new_tokens - 1 steps."""
    cache = model.new_cache()
    out = [int(torch.argmax(model.step(prompt, cache)))]
    if on_first:
        on_first()
    while len(out) < new_tokens:
        out.append(int(torch.argmax(model.step([out[-1]], cache))))
    return out


def option(args, name, default=None):
    return decoder.option(args, name, default)


def check(model, model_dir, out_dir):
    with open(os.path.join(out_dir, "tokens.json")) as f:
        tokens = json.load(f)
    n = tokens["promptLength"]
    prompt, theirs = tokens["ids"][:n], tokens["ids"][n:]
    ours = generate(model, prompt, len(theirs))
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    where = "" if not differ else ", first difference at new token %d: attnscope %d, pytorch %d" % (
        differ[0], theirs[differ[0]], ours[differ[0]])
    print("check %s: T=%d, %d new tokens, greedy ids %s%s" % (
        model_dir, n, len(theirs), "identical: ok" if not differ else "DIFFER", where))
    return not differ


def main():
    args = sys.argv[1:]
    model_dir = option(args, "--model")
    if not model_dir:
        sys.exit(__doc__)
    if "--print-ids" in args:  # the prompt of the timing mode, for `attnscope-cli generate --ids`
        with open(os.path.join(model_dir, "config.json")) as f:
            vocab = json.load(f)["vocab_size"]
        print(",".join(str(i) for i in decoder.bench_ids(int(option(args, "--tokens", "256")), vocab)))
        return
    torch.set_num_threads(int(option(args, "--threads", os.environ.get("THREADS", "2"))))
    model = Model(model_dir)
    with torch.no_grad():
        if option(args, "--check"):
            sys.exit(0 if check(model, model_dir, option(args, "--check")) else 1)
        T = int(option(args, "--tokens", "256"))
        N = int(option(args, "--generate", "64"))
        repeat = int(option(args, "--repeat", "3"))
        print("model: %s; torch %s eager, float32, %d threads" % (model.describe, torch.__version__,
                                                                 torch.get_num_threads()))
        sys.stdout.flush()
        prompt = decoder.bench_ids(T, model.vocab)
        prefill, rates = [], []
        for r in range(repeat + 1):  # run 0 warms caches and allocators
            marks = []
            start = time.perf_counter()
            generate(model, prompt, N + 1, lambda: marks.append(time.perf_counter()))
            end = time.perf_counter()
            if r:
                prefill.append((marks[0] - start) * 1000)
                rates.append(N / (end - marks[0]))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print("T=%d N=%d: prefill_ms %.1f, decode_tokens_per_s %.2f, median over %d runs, peak_rss_mib %.1f" % (
            T, N, statistics.median(prefill), statistics.median(rates), repeat, peak))


if __name__ == "__main__":
    main()
