#!/usr/bin/env python3
"""Capture a Hugging Face transformers model's queries and keys into an AttnScope Q/K dump.

    python3 scripts/capture_qk_transformers.py MODEL_ID_OR_DIR --text "..." --out DUMP
    python3 scripts/capture_qk_transformers.py --random-llama --out /tmp/qk-check   # self-check

The model runs with its fast attention kernel (SDPA by default, or flash attention); an
attention function registered with transformers' AttentionInterface records each layer's
query and key as the kernel receives them ([1, H, T, hd] and [1, KV, T, hd]: after q/k norms
and RoPE, before repeat_kv), with the module's scaling, sliding window, soft-cap and sinks, then
calls the kernel unchanged. scripts/attnscope_qk.py writes the dump; open it in AttnScope
(File > Open, or attnscope-cli stats|render|export DUMP).

Targets transformers 4.50 and later, 5.x included (AttentionInterface; masks for the custom
name through AttentionMaskInterface from 4.53). 4.48 and 4.49 (a plain ALL_ATTENTION_FUNCTIONS
dict) work with the SDPA kernel. Needs torch and transformers; docs/qk-dumps.md explains it.

--random-llama builds a tiny random Llama (LlamaConfig, offline, no download; with --window W a
Mistral config that slides over W positions) and checks the capture: the dump's weights
(attnscope_qk.read_dump + weights) against the eager attentions of output_attentions=True, and
the logits with the capture against those without. It prints the largest differences and exits
1 when they exceed --tolerance.

One sequence, one forward pass from position 0, no cache: the mask of every layer must then be
causal (or bidirectional) with at most a sliding window, which is all a dump can say. A layer
whose mask is anything else (Llama 4's chunked attention, Gemma 3's bidirectional image tokens,
padding) is refused when the kernel is given the mask as a tensor.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ beside the module in the source tree
import attnscope_qk  # noqa: E402

CAPTURE = "attnscope_capture"


class Capture:
    """The registered attention function: records q, k and the layer's facts, then runs the
    real kernel. ``layers`` fills in call order, which is layer order in one forward."""

    def __init__(self, kernel, dtype):
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        self.kernel_name = kernel
        self.kernel = ALL_ATTENTION_FUNCTIONS[kernel]
        self.dtype = dtype
        self.layers = []

    def __call__(self, module, query, key, value, attention_mask, *args, **kwargs):
        import torch

        index = len(self.layers)
        if query.shape[0] != 1:
            raise ValueError(f"layer {index}: batch of {query.shape[0]}; capture one sequence at a time")
        causal = kwargs.get("is_causal")
        if causal is None:
            causal = getattr(module, "is_causal", True)
        window = kwargs.get("sliding_window")
        scale = kwargs.get("scaling")
        if scale is None:  # what SDPA and flash attention do with no scale
            scale = query.shape[-1] ** -0.5
        softcap = kwargs.get("softcap")
        sinks = kwargs.get("s_aux")  # gpt-oss's per-head sink logits
        if self.kernel_name == "sdpa" and (softcap is not None or sinks is not None):
            # transformers' SDPA function ignores both: the dump would state what was not computed.
            raise ValueError(f"layer {index}: the model soft-caps or has sinks, which the sdpa kernel ignores; "
                             "use --kernel flash_attention_2 (or another kernel that applies them)")
        if isinstance(attention_mask, torch.Tensor):
            check_mask(attention_mask, query.shape[2], key.shape[2], bool(causal), window, index)
        dtype = self.dtype
        if dtype == "auto":
            dtype = {torch.bfloat16: "BF16", torch.float16: "F16"}.get(query.dtype, "F32")
        self.layers.append(dict(q=query[0].detach().cpu(), k=key[0].detach().cpu(), layout="htd", scale=float(scale),
                                causal=bool(causal), window=window or None, softcap=softcap,
                                sinks=None if sinks is None else sinks.detach().cpu(), dtype=dtype))
        return self.kernel(module, query, key, value, attention_mask, *args, **kwargs)


def check_mask(mask, tq, tk, causal, window, index):
    """Refuses a layer whose mask (bool: True = attend; float: 0 = attend) is not the
    causal/window mask of positions 0..T-1 that the dump will state."""
    import torch

    if mask.dim() == 2:  # flash attention's [B, T] padding mask
        if not bool(mask.bool().all()):
            raise ValueError(f"layer {index}: padded tokens; capture one unpadded sequence")
        return
    allowed = mask if mask.dtype == torch.bool else mask == 0
    allowed = allowed[..., :tq, :tk].reshape(-1, tq, tk)
    i = torch.arange(tk - tq, tk, device=mask.device)[:, None]  # queries are the last tq positions
    j = torch.arange(tk, device=mask.device)[None, :]
    expected = torch.ones(tq, tk, dtype=torch.bool, device=mask.device)
    if causal:
        expected &= j <= i
    if window:
        expected &= j > i - window
    if not bool((allowed == expected).all()):
        raise ValueError(f"layer {index}: the model's attention mask is not causal with a window of {window}; "
                         "a Q/K dump cannot state it (chunked or bidirectional attention, or padding)")


def register(capture):
    """Makes CAPTURE a valid attention implementation, masks included."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    try:
        from transformers import AttentionInterface
    except ImportError:  # 4.48, 4.49
        ALL_ATTENTION_FUNCTIONS[CAPTURE] = capture
    else:
        AttentionInterface.register(CAPTURE, capture)
    try:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    except ImportError:  # before 4.53 each model builds its masks (the 4D eager form for a custom name)
        return
    # Without this, 4.53+ builds no mask at all for an unknown name: no sliding window.
    ALL_MASK_ATTENTION_FUNCTIONS.register(CAPTURE, ALL_MASK_ATTENTION_FUNCTIONS[capture.kernel_name])


def use_attention(model, name):
    """Switches a loaded model's attention implementation (set_attn_implementation where it
    exists and takes the name, else the config field every attention module reads)."""
    if hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation(name)
            return
        except (ValueError, TypeError, KeyError):
            pass
    model.config._attn_implementation = name


def capture_dump(model, ids, capture, out, tokens):
    import torch

    use_attention(model, CAPTURE)
    capture.layers.clear()
    with torch.no_grad():
        logits = model(ids, use_cache=False).logits
    if not capture.layers:
        raise SystemExit("no attention layer called the registered function: does this model use "
                         "transformers' attention interface (ALL_ATTENTION_FUNCTIONS)?")
    attnscope_qk.write_dump(out, capture.layers, tokens=tokens)
    return logits


def random_model(window):
    from transformers import LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

    shape = dict(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=256)
    if window:
        config, cls = MistralConfig(sliding_window=window, **shape), MistralForCausalLM
    else:
        config, cls = LlamaConfig(**shape), LlamaForCausalLM
    config._attn_implementation = "eager"
    return cls(config).eval()


def self_check(args):
    import torch

    torch.manual_seed(0)
    model = random_model(args.window)
    ids = torch.randint(model.config.vocab_size, (1, args.length))
    with torch.no_grad():
        eager = model(ids, output_attentions=True, use_cache=False).attentions  # L x [1, H, T, T]
        use_attention(model, args.kernel)
        plain = model(ids, use_cache=False).logits
    capture = Capture(args.kernel, args.dtype)
    register(capture)
    logits = capture_dump(model, ids, capture, args.out, [f"id{int(i)}" for i in ids[0]])

    dump = attnscope_qk.read_dump(args.out)
    worst = 0.0
    for layer, attn in zip(dump.layers, eager):
        for h in range(layer.heads):
            got = attnscope_qk.weights(layer, h)
            worst = max(worst, float(np.abs(got - attn[0, h].double().numpy()).max()))
    logit_diff = float((logits - plain).abs().max())
    windows = sorted({layer.window or 0 for layer in dump.layers})
    print(f"{args.out}: {len(dump.layers)} layers, T {args.length}, windows {windows}, kernel {args.kernel}")
    print(f"max |weights(dump) - eager attentions| = {worst:.3g}")
    print(f"max |logits with capture - logits without| = {logit_diff:.3g}")
    if len(dump.layers) != len(eager) or worst > args.tolerance or logit_diff > args.tolerance:
        print(f"FAILED: above the tolerance {args.tolerance}")
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", help="a model id on the Hub or a local folder")
    parser.add_argument("--text", help="the text to run (tokenised by the model's tokenizer)")
    parser.add_argument("--out", required=True, help="the dump folder to write (replaced if it is a dump)")
    parser.add_argument("--kernel", default="sdpa", help="the attention kernel that computes: sdpa (default), "
                        "flash_attention_2 (transformers 4.53+), or another name in ALL_ATTENTION_FUNCTIONS")
    parser.add_argument("--dtype", default="auto", choices=["auto", "F32", "BF16", "F16"],
                        help="stored dtype of q and k; auto: as the kernel received them")
    parser.add_argument("--torch-dtype", default="auto", help="dtype to load the model in (auto, bfloat16, ...)")
    parser.add_argument("--device", default=None, help="device for the model (cuda, cpu, ...); default: cpu")
    parser.add_argument("--random-llama", action="store_true",
                        help="self-check on a tiny random Llama built offline")
    parser.add_argument("--window", type=int, default=0, help="with --random-llama: a Mistral with this window")
    parser.add_argument("--length", type=int, default=24, help="with --random-llama: tokens to run")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="with --random-llama: largest difference")
    args = parser.parse_args()

    if args.random_llama:
        return self_check(args)
    if not args.model or args.text is None:
        parser.error("give MODEL_ID_OR_DIR and --text (or --random-llama)")

    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = args.torch_dtype if args.torch_dtype == "auto" else getattr(torch, args.torch_dtype)
    # `torch_dtype` became `dtype` in 4.56.
    major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    dtype_arg = {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": dtype}
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation=args.kernel, **dtype_arg)
    model = model.to(args.device or "cpu").eval()
    ids = tokenizer(args.text, return_tensors="pt").input_ids.to(model.device)
    capture = Capture(args.kernel, args.dtype)
    register(capture)
    capture_dump(model, ids, capture, args.out, tokenizer.convert_ids_to_tokens(ids[0].tolist()))
    print(f"{args.out}: {len(capture.layers)} layers, {ids.shape[1]} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
