#!/usr/bin/python3
"""Measures what each head of the tiny Qwen3 example model does, in PyTorch (python3-torch).

    resources/models/tiny-qwen3/analyse_heads.py [MODEL_DIR]

MODEL_DIR defaults to this folder. The inputs are the sentences of
tests/fixtures/tiny-qwen3/sentences.json, each typed twice, as Qwen3 ids (computed once with
Hugging Face's JavaScript tokenizer, so that neither node nor a Python tokenizer is needed here).
The forward is scripts/train_example_model.py's own (transformers' Qwen3), on the weights read
back from model.safetensors. Per sentence, layer and head it prints:
- previous: the mean weight a query puts on the token just before it;
- induction: the mean weight a query in the second copy puts on the token after the latest
  earlier occurrence of its own token (the induction pattern);
- first: the mean weight on the first token (where heads with nothing to do park).
tests/gui/tst_examplemodel.cpp computes the same measures with AttnScope's own forward.
"""

import importlib.util
import json
import pathlib
import struct
import sys

import numpy
import torch

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SENTENCES = ROOT / "tests" / "fixtures" / "tiny-qwen3" / "sentences.json"


def trainer():
    spec = importlib.util.spec_from_file_location("train_example_model", ROOT / "scripts" / "train_example_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_bf16(path):
    data = path.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "BF16":
            sys.exit("analyse_heads: %s is %s, not BF16" % (name, entry["dtype"]))
        begin, end = entry["data_offsets"]
        raw = numpy.frombuffer(data, dtype="<u2", count=(end - begin) // 2, offset=8 + size + begin)
        values = (raw.astype(numpy.uint32) << 16).view(numpy.float32).reshape(entry["shape"])
        tensors[name] = torch.from_numpy(values.copy())
    return tensors


def load(module, folder):
    model = module.TinyQwen3(module.VOCAB)
    tensors = read_bf16(folder / "model.safetensors")
    with torch.no_grad():
        model.embed_tokens.copy_(tensors["model.embed_tokens.weight"])
        model.norm.weight.copy_(tensors["model.norm.weight"])
        for i, layer in enumerate(model.layers):
            p = "model.layers.%d." % i
            for ours, theirs in (("input_layernorm.weight", "input_layernorm.weight"),
                                 ("post_attention_layernorm.weight", "post_attention_layernorm.weight"),
                                 ("q_proj", "self_attn.q_proj.weight"), ("k_proj", "self_attn.k_proj.weight"),
                                 ("v_proj", "self_attn.v_proj.weight"), ("o_proj", "self_attn.o_proj.weight"),
                                 ("q_norm.weight", "self_attn.q_norm.weight"),
                                 ("k_norm.weight", "self_attn.k_norm.weight"),
                                 ("gate_proj", "mlp.gate_proj.weight"), ("up_proj", "mlp.up_proj.weight"),
                                 ("down_proj", "mlp.down_proj.weight")):
                layer.get_parameter(ours).copy_(tensors[p + theirs])
    return model


def attentions(model, ids):
    for layer in model.layers:
        layer.keep = True
    with torch.no_grad():
        model(torch.tensor([ids]))
    maps = [layer.attention[0].double().numpy() for layer in model.layers]
    for layer in model.layers:
        layer.keep, layer.attention = False, None
    return maps


def main():
    folder = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    torch.set_num_threads(1)
    module = trainer()
    model = load(module, folder)
    for sentence in json.loads(SENTENCES.read_text(encoding="utf-8")):
        ids = sentence["ids"]
        t = len(ids)
        # For each query of the second copy, the position just after the latest earlier occurrence
        # of its token.
        targets = {}
        for i in range(t // 2 + 1, t):
            for j in range(i - 1, 0, -1):
                if ids[j - 1] == ids[i]:
                    targets[i] = j
                    break
        print("%s (%d tokens): %s" % (sentence["name"], t, sentence["text"]))
        print("layer head previous induction first")
        for l, maps in enumerate(attentions(model, ids)):
            for h, a in enumerate(maps):
                previous = numpy.mean([a[i, i - 1] for i in range(1, t)])
                induction = numpy.mean([a[i, j] for i, j in targets.items()])
                first = numpy.mean(a[1:, 0])
                print(f"{l} {h} {previous:.3f} {induction:.3f} {first:.3f}")


if __name__ == "__main__":
    main()
