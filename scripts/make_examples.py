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

    modern_attention()


MODERN = "modern-attention"
MODERN_GROUP = "今天的注意力 — Today's attention"


def modern(name, title, notes, project):
    """An example of design.md's "Modern attention", in the File > Examples submenu of its own."""
    (OUT / MODERN).mkdir(parents=True, exist_ok=True)
    body = {"format": "attnscope", "version": 1, "title": title, "tutorial": MODERN_GROUP}
    body.update(project)
    body["notes"] = notes
    (OUT / MODERN / name).write_text(encode(body) + "\n", encoding="utf-8")


def columns(m, blocks, width):
    """The column blocks `blocks` (each `width` wide) of a matrix, side by side."""
    return [[row[b * width + c] for b in blocks for c in range(width)] for row in m]


def modern_attention():
    # One set of inputs and W_Q for multi-head, grouped-query and multi-query attention: the
    # grouped and multi-query K/V weights are the multi-head ones of heads 0 and 2 (resp. 0), so
    # head 0 is the same in all three and the others show what sharing changes.
    rng = random.Random(23)
    words = ["the", "cat", "sat", "on", "the", "mat"]
    d, h, dk = 8, 4, 4
    x = matrix(rng, len(words), d)
    wq, wk, wv = matrix(rng, d, h * dk, 0.6), matrix(rng, d, h * dk, 0.6), matrix(rng, d, h * dk, 0.6)
    wo = matrix(rng, h * dk, d, 0.5)
    shared = {"mode": "self", "heads": h, "headDimQK": dk, "headDimV": dk, "scale": "inv_sqrt_dk",
              "maskFill": "-inf", "query": {"tokens": words, "x": x}}
    modern("1-multi-head.attnscope.json",
           "多头注意力：4 个头各有自己的 K 和 V — Multi-head attention: 4 heads, each with its own K and V",
           "四个查询头各读自己的键和值（W_K、W_V 各有 4×4 列）。与同一文件夹中的分组查询和多查询示例比较：输入和 W_Q 相同。"
           " — Four query heads, each reading its own keys and values (W_K and W_V have 4×4 columns). Compare "
           "with the grouped-query and multi-query examples beside it: the inputs and W_Q are the same.",
           dict(shared, weights={"q": wq, "k": wk, "v": wv, "o": wo}, mask={"causal": True}))
    modern("2-grouped-query.attnscope.json",
           "分组查询注意力：4 个查询头共享 2 组 K、V — Grouped-query attention: 4 query heads share 2 K/V heads",
           "kvHeads = 2：头 0 和 1 读键值头 0，头 2 和 3 读键值头 1（Llama、Qwen、Mistral 的做法）。W_K 和 W_V 只有 2×4 列，"
           "取自多头示例的头 0 和头 2，所以头 0 和头 2 与多头示例完全相同，头 1 和头 3 变了：它们用邻居的键和值。"
           " — kvHeads = 2: heads 0 and 1 read key/value head 0, heads 2 and 3 read key/value head 1 (as Llama, "
           "Qwen and Mistral do). W_K and W_V have only 2×4 columns, taken from heads 0 and 2 of the multi-head "
           "example, so heads 0 and 2 are exactly as there while heads 1 and 3 change: they use their "
           "neighbour's keys and values.",
           dict(shared, kvHeads=2,
                weights={"q": wq, "k": columns(wk, [0, 2], dk), "v": columns(wv, [0, 2], dk), "o": wo},
                mask={"causal": True}))
    modern("3-multi-query.attnscope.json",
           "多查询注意力：4 个查询头共享 1 组 K、V — Multi-query attention: 4 query heads share 1 K/V head",
           "kvHeads = 1：所有查询头读同一组键和值（多头示例的头 0），只有查询不同。键值缓存小到四分之一。"
           " — kvHeads = 1: every query head reads the same keys and values (head 0 of the multi-head example); "
           "only the queries differ. The key/value cache is a quarter of the size.",
           dict(shared, kvHeads=1,
                weights={"q": wq, "k": columns(wk, [0], dk), "v": columns(wv, [0], dk), "o": wo},
                mask={"causal": True}))

    # RoPE: the same four words twice, with the same vectors. Without RoPE "the" at 0 and at 4
    # would score the same against every key; with it a score depends on the distance only.
    rng = random.Random(29)
    words = ["the", "cat", "sat", "down"] * 2
    d, dk = 6, 6
    base_rows = matrix(rng, 4, d)
    modern("4-rope.attnscope.json",
           "RoPE：分数只取决于相对距离 — RoPE: scores depend on the relative distance",
           "同样四个词出现两次，向量完全相同。RoPE 按位置旋转 q 和 k，所以分数只取决于两个词的距离：(5, 4) 与 (1, 0) "
           "相同，(4, 0) 与 (0, 0) 不同。在逐步视图中点“与不加 RoPE 的分数比较”。"
           " — The same four words twice, with identical vectors. RoPE turns q and k by their positions, so a score "
           "depends only on how far apart the two tokens are: (5, 4) equals (1, 0), while (4, 0) differs from "
           "(0, 0). In the step view, click \"Compare with the scores without RoPE\".",
           {"mode": "self", "heads": 1, "headDimQK": dk, "headDimV": dk, "scale": "inv_sqrt_dk", "maskFill": "-inf",
            "rope": {"base": 10.0},
            "query": {"tokens": words, "x": base_rows + base_rows},
            "weights": {"q": matrix(rng, d, dk, 0.7), "k": matrix(rng, d, dk, 0.7), "v": matrix(rng, d, dk, 0.7),
                        "o": None}})

    rng = random.Random(31)
    words = ("once upon a time a small cat sat on a warm mat and watched the quiet rain").split()
    d, h, dk = 8, 2, 4
    modern("5-sliding-window.attnscope.json",
           "滑动窗口：每个词元只看最近的 4 个 — Sliding window: each token sees the last 4",
           "mask.window = 4，加上因果掩码：词元 i 只能关注 i−3 到 i（Mistral、Gemma 的局部层）。掩码视图中的蓝线是窗口的左边界。"
           " — mask.window = 4 with the causal mask: token i may attend to tokens i−3 to i only (Mistral's and "
           "Gemma's local layers). The blue line in the mask view is the window's left edge.",
           {"mode": "self", "heads": h, "headDimQK": dk, "headDimV": dk, "scale": "inv_sqrt_dk", "maskFill": "-inf",
            "query": {"tokens": words, "x": matrix(rng, len(words), d)},
            "weights": {"q": matrix(rng, d, h * dk, 0.6), "k": matrix(rng, d, h * dk, 0.6),
                        "v": matrix(rng, d, h * dk, 0.6), "o": None},
            "mask": {"causal": True, "window": 4}})

    rng = random.Random(37)
    words = ["the", "cat", "sat", "on", "the", "mat"]
    d, h, dk = 6, 2, 3
    modern("6-sink.attnscope.json",
           "注意力汇点：吸走注意力 — An attention sink soaks up attention",
           "每个头多一个汇点 logit，参与 softmax 后被丢弃，所以每行之和小于 1。头 0 的汇点 2.5 吸走了大部分注意力，"
           "头 1 的汇点 −1 几乎不起作用。悬停单元格可看汇点所占份额。"
           " — Each head has one more logit, the sink, which joins the softmax and is then dropped, so each row "
           "sums to less than 1. Head 0's sink of 2.5 soaks up most of the attention; head 1's sink of −1 "
           "hardly matters. Hover a cell to see the sink's share.",
           {"mode": "self", "heads": h, "headDimQK": dk, "headDimV": dk, "scale": "inv_sqrt_dk", "maskFill": "-inf",
            "sinks": [2.5, -1.0],
            "query": {"tokens": words, "x": matrix(rng, len(words), d)},
            "weights": {"q": matrix(rng, d, h * dk, 0.6), "k": matrix(rng, d, h * dk, 0.6),
                        "v": matrix(rng, d, h * dk, 0.6), "o": None},
            "mask": {"causal": True}})

    rng = random.Random(41)
    words = ["the", "cat", "sat", "on", "the", "mat"]
    d, dk = 6, 4
    modern("7-softcap.attnscope.json",
           "软上限：分数被压在 (-2, 2) 之内 — Soft-capping squeezes the scores into (-2, 2)",
           "softcap = 2：分数变为 2·tanh(分数/2)，再进入掩码和 softmax（Gemma 2 的做法）。大分数被压平，没有哪个键能独占一行。"
           " — softcap = 2: scores become 2·tanh(score/2) before the mask and the softmax (as Gemma 2 does). "
           "Large scores flatten, so no single key can take a whole row.",
           {"mode": "self", "heads": 1, "headDimQK": dk, "headDimV": dk, "scale": "inv_sqrt_dk", "maskFill": "-inf",
            "softcap": 2.0,
            "query": {"tokens": words, "x": matrix(rng, len(words), d, 2.5)},
            "weights": {"q": matrix(rng, d, dk, 0.9), "k": matrix(rng, d, dk, 0.9), "v": matrix(rng, d, dk, 0.7),
                        "o": None}})


if __name__ == "__main__":
    main()
