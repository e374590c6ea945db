#!/usr/bin/env python3
"""Writes the built-in example projects in resources/examples/ (run once; outputs are committed).

Values are seeded and rounded to two decimals so the files stay readable in a classroom.
"""
import json
import pathlib
import random

OUT = pathlib.Path(__file__).resolve().parent.parent / "resources" / "examples"


def matrix(rng, rows, cols, scale=1.0):
    return [[round(rng.gauss(0.0, scale), 2) for _ in range(cols)] for _ in range(rows)]


def encode(value, indent=0):
    """JSON with every list of scalars on one line (a matrix row per line)."""
    pad = "  " * indent
    if isinstance(value, dict):
        items = [f'{pad}  {json.dumps(k)}: {encode(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
        items = [pad + "  " + encode(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def dump(name, project):
    (OUT / name).write_text(encode(project) + "\n", encoding="utf-8")


def main():
    OUT.mkdir(parents=True, exist_ok=True)

    # The self-attention tutorial's worked example: three 4-d inputs, given weights, no scaling.
    dump("self-attention-tutorial.attnscope.json", {
        "format": "attnscope", "version": 1,
        "title": "Self-attention, worked example (one head, no scaling)",
        "mode": "self", "heads": 1, "headDimQK": 3, "headDimV": 3,
        "scale": "none", "maskFill": "-inf",
        "query": {"tokens": ["Thinking", "Machines", "learn"],
                  "x": [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]},
        "weights": {
            "q": [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]],
            "k": [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]],
            "v": [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]],
            "o": None,
        },
        "notes": "Inputs and weights from the self-attention tutorial; its first output row is about "
                 "[1.9366, 6.6831, 1.5951].",
    })

    rng = random.Random(7)
    words = ["the", "cat", "sat", "on", "the", "mat"]
    d, h, dk = 8, 2, 4
    dump("multihead-causal.attnscope.json", {
        "format": "attnscope", "version": 1,
        "title": "Multi-head causal self-attention (2 heads)",
        "mode": "self", "heads": h, "headDimQK": dk, "headDimV": dk,
        "scale": "inv_sqrt_dk", "maskFill": "-inf",
        "query": {"tokens": words, "x": matrix(rng, len(words), d)},
        "weights": {
            "q": matrix(rng, d, h * dk, 0.5), "k": matrix(rng, d, h * dk, 0.5),
            "v": matrix(rng, d, h * dk, 0.5), "o": matrix(rng, h * dk, d, 0.5),
            "qBias": [0.0] * (h * dk), "kBias": [0.0] * (h * dk),
            "vBias": [0.0] * (h * dk), "oBias": [0.0] * d,
        },
        "mask": {"causal": True},
    })

    rng = random.Random(11)
    target = ["<s>", "ich", "bin", "ein", "Student"]
    source = ["I", "am", "a", "student", "<pad>", "<pad>"]
    dq, dkv, h, dk, dv = 6, 8, 2, 3, 4
    dump("cross-attention-translation.attnscope.json", {
        "format": "attnscope", "version": 1,
        "title": "Cross-attention: German decoder attends to the padded English source",
        "mode": "cross", "heads": h, "headDimQK": dk, "headDimV": dv,
        "scale": "inv_sqrt_dk", "maskFill": "-inf",
        "query": {"tokens": target, "x": matrix(rng, len(target), dq)},
        "key": {"tokens": source, "x": matrix(rng, 4, dkv) + [[0.0] * dkv, [0.0] * dkv]},
        "weights": {
            "q": matrix(rng, dq, h * dk, 0.6), "k": matrix(rng, dkv, h * dk, 0.6),
            "v": matrix(rng, dkv, h * dv, 0.6), "o": matrix(rng, h * dv, dq, 0.6),
        },
        "mask": {"keyPadding": [True, True, True, True, False, False]},
    })

    rng = random.Random(5)
    words = ["hello", "world", "!", "<pad>", "<pad>"]
    d, h, dk = 4, 1, 4
    dump("padding-mask.attnscope.json", {
        "format": "attnscope", "version": 1,
        "title": "Padding mask: real tokens never attend to <pad>",
        "mode": "self", "heads": h, "headDimQK": dk, "headDimV": dk,
        "scale": "inv_sqrt_dk", "maskFill": "-1e9",
        "query": {"tokens": words, "x": matrix(rng, 3, d) + [[0.0] * d, [0.0] * d]},
        "weights": {"q": matrix(rng, d, dk, 0.7), "k": matrix(rng, d, dk, 0.7),
                    "v": matrix(rng, d, dk, 0.7), "o": None},
        "mask": {"keyPadding": [True, True, True, False, False]},
        "notes": "Filled with -1e9 as in the tutorial's code: the <pad> keys get weight 0.",
    })


if __name__ == "__main__":
    main()
