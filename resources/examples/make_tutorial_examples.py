#!/usr/bin/python3
"""Generates the built-in tutorial examples: resources/examples/tutorialN-*/ (File > Examples, one
submenu per tutorial; see /work/shared/tutorials.md) and, for the ones computed here, what the
tutorial's own PyTorch class gives for them in tests/fixtures/tutorial-examples/NAME/ (weights.npy,
output.npy, float64), which tst_examples_cli and tst_examples compare against.

Run once with Debian's python3-torch and commit the output; the build only reads it.
Seed 000's MultiHeadAttention and seed 004's MultiHeadAttention are the fixtures that
tests/fixtures/make_tutorial_fixtures.py wrote: they are copied (with their .npy files) and given
the two-language title. The others are computed here with the tutorial's class and its seed.

Every example's title is "中文标题 — English title", and "tutorial" names its submenu the same way.
"""
import json
import pathlib
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
EXPECTED = ROOT / "tests" / "fixtures" / "tutorial-examples"
FIXTURES = ROOT / "tests" / "fixtures" / "tutorial"
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
from make_tutorial_fixtures import f32, make_f32_module, nested, save_npy, vec  # noqa: E402

TUTORIALS = {
    1: "教程 1：多头注意力与交叉注意力 — Tutorial 1: multi-head and cross-attention",
    2: "教程 2：从零实现自注意力 — Tutorial 2: self-attention from scratch",
    3: "教程 3：交叉注意力的公式与代码 — Tutorial 3: cross-attention formulas and code",
    4: "教程 4：单头与多头注意力 — Tutorial 4: single-head vs multi-head attention",
    5: "教程 5：缩放点积与多头注意力的形状 — Tutorial 5: scaled dot-product and multi-head attention, shape by shape",
}
FOLDERS = {1: "tutorial1-multihead-cross", 2: "tutorial2-self-attention", 3: "tutorial3-cross-attention",
           4: "tutorial4-single-vs-multi", 5: "tutorial5-shapes"}


def header(tutorial, title, **fields):
    return {"format": "attnscope", "version": 1, "title": title, "tutorial": TUTORIALS[tutorial], **fields}


def write(tutorial, name, project, weights=None, output=None):
    folder = EXAMPLES / FOLDERS[tutorial]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.attnscope.json").write_text(json.dumps(project, indent=1, ensure_ascii=False) + "\n")
    if output is not None:
        expected = EXPECTED / name
        expected.mkdir(parents=True, exist_ok=True)
        np.save(expected / "weights.npy", weights.detach().numpy().astype(np.float64))
        np.save(expected / "output.npy", output.detach().numpy().astype(np.float64))


def copy_fixture(tutorial, name, fixture, title):
    """A committed tutorial fixture, its .npy files beside it, with the two-language title."""
    folder = EXAMPLES / FOLDERS[tutorial]
    folder.mkdir(parents=True, exist_ok=True)
    project = json.loads((FIXTURES / fixture / "project.attnscope.json").read_text())
    project = header(tutorial, title, **{k: v for k, v in project.items() if k not in ("format", "version", "title")})
    if (FIXTURES / fixture / "data").is_dir():
        shutil.copytree(FIXTURES / fixture / "data", folder / "data", dirs_exist_ok=True)
    write(tutorial, name, project)


# --- Tutorial 1 (seed 000): CrossAttention ------------------------------------------------------
class CrossAttention000(nn.Module):
    """Seed 000's CrossAttention(in_dim1, in_dim2, k_dim, v_dim, num_heads): queries from x1, keys and
    values from x2; q/k/v without bias, output projection to in_dim1 with bias; -1e9 fill."""

    def __init__(self, in_dim1, in_dim2, k_dim, v_dim, num_heads):
        super().__init__()
        self.num_heads, self.k_dim, self.v_dim = num_heads, k_dim, v_dim
        self.proj_q1 = nn.Linear(in_dim1, k_dim * num_heads, bias=False)
        self.proj_k2 = nn.Linear(in_dim2, k_dim * num_heads, bias=False)
        self.proj_v2 = nn.Linear(in_dim2, v_dim * num_heads, bias=False)
        self.proj_o = nn.Linear(v_dim * num_heads, in_dim1)

    def forward(self, x1, x2, mask=None):
        batch_size, seq_len1, _ = x1.size()
        seq_len2 = x2.size(1)
        q1 = self.proj_q1(x1).view(batch_size, seq_len1, self.num_heads, self.k_dim).permute(0, 2, 1, 3)
        k2 = self.proj_k2(x2).view(batch_size, seq_len2, self.num_heads, self.k_dim).permute(0, 2, 3, 1)
        v2 = self.proj_v2(x2).view(batch_size, seq_len2, self.num_heads, self.v_dim).permute(0, 2, 1, 3)
        attn = torch.matmul(q1, k2) / self.k_dim ** 0.5
        if mask is not None:
            attn = attn.masked_fill(mask.unsqueeze(1).unsqueeze(1) == 0, -1e9)  # key padding of x2
        attn = F.softmax(attn, dim=-1)
        output = torch.matmul(attn, v2).permute(0, 2, 1, 3).contiguous().view(batch_size, seq_len1, -1)
        return self.proj_o(output), attn


def tutorial1():
    copy_fixture(1, "mha-batch-padding", "seed000_mha_batch_padding",
                 "多头注意力：两个序列的批次，填充掩码 [[1,1,1],[1,0,0]]，填充值 -1e9 — "
                 "MultiHeadAttention: a batch of two, padding mask [[1,1,1],[1,0,0]], fill -1e9")
    torch.manual_seed(0)
    in1, in2, k_dim, v_dim, heads = 8, 6, 4, 5, 2
    ca = make_f32_module(CrossAttention000(in1, in2, k_dim, v_dim, heads))
    x1 = f32(torch.randn(2, 3, in1))
    x2 = f32(torch.randn(2, 4, in2))
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    with torch.no_grad():
        output, weights = ca(x1, x2, mask)
    project = header(
        1, "交叉注意力：查询来自 x1（3 个词元），键和值来自 x2（4 个词元），填充值 -1e9 — "
           "CrossAttention: queries from x1 (3 tokens), keys and values from x2 (4 tokens), fill -1e9",
        mode="cross", heads=heads, headDimQK=k_dim, headDimV=v_dim, scale="inv_sqrt_dk", maskFill="-1e9",
        query={"tokens": [["我", "是", "学生"], ["你", "好", "吗"]], "x": nested(x1)},
        key={"tokens": [["I", "am", "a", "student"], ["hello", "there", "<pad>", "<pad>"]], "x": nested(x2)},
        weights={"q": nested(ca.proj_q1.weight.T), "k": nested(ca.proj_k2.weight.T),
                 "v": nested(ca.proj_v2.weight.T), "o": nested(ca.proj_o.weight.T), "oBias": vec(ca.proj_o.bias)},
        mask={"causal": False, "keyPadding": [[True, True, True, True], [True, True, False, False]]})
    write(1, "cross-attention", project, weights, output)


# --- Tutorial 2 (seed 001): the worked example --------------------------------------------------
def tutorial2():
    inputs = torch.tensor([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=torch.float64)
    w_key = torch.tensor([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=torch.float64)
    w_query = torch.tensor([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=torch.float64)
    w_value = torch.tensor([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=torch.float64)
    keys, queries, values = inputs @ w_key, inputs @ w_query, inputs @ w_value
    attn_scores = queries @ keys.T
    attn_scores_softmax = torch.softmax(attn_scores, dim=-1)
    weighted_values = values[:, None] * attn_scores_softmax.T[:, :, None]
    outputs = weighted_values.sum(dim=0)
    assert abs(outputs[0, 0].item() - 1.9366) < 1e-4, outputs
    as_int = lambda t: t.to(torch.int64).tolist()  # noqa: E731
    project = header(
        2, "自注意力计算实例（单头，不缩放，第一行输出约为 [1.9366, 6.6831, 1.5951]） — "
           "Self-attention worked example (one head, no scaling, first output row about [1.9366, 6.6831, 1.5951])",
        mode="self", heads=1, headDimQK=3, headDimV=3, scale="none", maskFill="-inf",
        query={"tokens": ["input 1", "input 2", "input 3"], "x": as_int(inputs)},
        weights={"q": as_int(w_query), "k": as_int(w_key), "v": as_int(w_value), "o": None})
    write(2, "worked-example", project, attn_scores_softmax[None], outputs)


# --- Tutorial 3 (seed 002): 512-wide cross-attention ------------------------------------------
class CrossAttention002(nn.Module):
    """Seed 002's CrossAttention(embed_dim, num_heads, dropout=0.1): four embed_dim -> embed_dim
    projections with bias, scores / head_dim ** 0.5, masked_fill(mask == 0, -inf); dropout is off."""

    def __init__(self, embed_dim, num_heads, dropout=0.1):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B, T_q, _ = query.size()
        T_k = key.size(1)
        Q = self.q_proj(query).view(B, T_q, self.num_heads, self.head_dim).transpose(1, 2)  # [B, heads, T_q, head_dim]
        K = self.k_proj(key).view(B, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        V = self.v_proj(value).view(B, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.head_dim ** 0.5  # [B, heads, T_q, T_k]
        if mask is not None:
            scores = scores.masked_fill(mask.unsqueeze(1) == 0, float("-inf"))
        attn = self.dropout(F.softmax(scores, dim=-1))
        context = torch.matmul(attn, V).transpose(1, 2).contiguous().view(B, T_q, -1)
        return self.out_proj(context), attn


def tutorial3():
    torch.manual_seed(2)
    embed_dim, heads = 512, 8
    ca = make_f32_module(CrossAttention002(embed_dim, heads))
    query = f32(torch.randn(8, 10, embed_dim))
    key = f32(torch.randn(8, 20, embed_dim))
    with torch.no_grad():
        output, weights = ca(query, key, key)
    assert tuple(output.shape) == (8, 10, 512)
    folder = EXAMPLES / FOLDERS[3]
    f = np.float32
    project = header(
        3, "交叉注意力：512 维，8 个头，解码器查询 8×10×512，编码器键值 8×20×512 — "
           "Cross-attention: 512 wide, 8 heads, decoder queries 8×10×512, encoder keys and values 8×20×512",
        mode="cross", heads=heads, headDimQK=embed_dim // heads, headDimV=embed_dim // heads,
        scale="inv_sqrt_dk", maskFill="-inf",
        query={"tokens": [f"t{i}" for i in range(10)], "x": save_npy(folder, "data/decoder_query.npy", query, f)},
        key={"tokens": [f"s{j}" for j in range(20)], "x": save_npy(folder, "data/encoder_key_value.npy", key, f)},
        weights={"q": save_npy(folder, "data/q_proj.npy", ca.q_proj.weight.T, f),
                 "k": save_npy(folder, "data/k_proj.npy", ca.k_proj.weight.T, f),
                 "v": save_npy(folder, "data/v_proj.npy", ca.v_proj.weight.T, f),
                 "o": save_npy(folder, "data/out_proj.npy", ca.out_proj.weight.T, f),
                 "qBias": vec(ca.q_proj.bias), "kBias": vec(ca.k_proj.bias),
                 "vBias": vec(ca.v_proj.bias), "oBias": vec(ca.out_proj.bias)})
    write(3, "cross-attention-512", project, weights, output)


# --- Tutorial 4 (seed 003): single-head vs multi-head, dk != dv --------------------------------
class SelfAttention003(nn.Module):
    """Seed 003's Self_Attention(dim, dk, dv): q/k dim -> dk, v dim -> dv, with bias; scale dk ** -0.5."""

    def __init__(self, dim, dk, dv):
        super().__init__()
        self.scale = dk ** -0.5
        self.q, self.k, self.v = nn.Linear(dim, dk), nn.Linear(dim, dk), nn.Linear(dim, dv)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        attn = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1)
        return attn @ v, attn  # [batch, seq_len, dv]


class MultiHeadAttention003(nn.Module):
    """Seed 003's MultiHeadAttention(dim, dk, dv, num_heads): everything with bias, / dk ** 0.5."""

    def __init__(self, dim, dk, dv, num_heads):
        super().__init__()
        self.dk, self.dv, self.num_heads = dk, dv, num_heads
        self.q_linear = nn.Linear(dim, dk * num_heads)
        self.k_linear = nn.Linear(dim, dk * num_heads)
        self.v_linear = nn.Linear(dim, dv * num_heads)
        self.out_linear = nn.Linear(dv * num_heads, dim)

    def forward(self, x):
        B, N, _ = x.shape
        q = self.q_linear(x).view(B, N, self.num_heads, self.dk).transpose(1, 2)  # [B, heads, N, dk]
        k = self.k_linear(x).view(B, N, self.num_heads, self.dk).transpose(1, 2)
        v = self.v_linear(x).view(B, N, self.num_heads, self.dv).transpose(1, 2)
        attn = (q @ k.transpose(-2, -1) / self.dk ** 0.5).softmax(dim=-1)  # [B, heads, N, N]
        out = (attn @ v).transpose(1, 2).reshape(B, N, self.num_heads * self.dv)  # [B, N, heads*dv]
        return self.out_linear(out), attn


def tutorial4():
    torch.manual_seed(3)
    dim, dk, dv, heads = 8, 4, 6, 2
    single = make_f32_module(SelfAttention003(dim, dk, dv))
    multi = make_f32_module(MultiHeadAttention003(dim, dk, dv, heads))
    x = f32(torch.randn(2, 5, dim))
    tokens = [["the", "cat", "sat", "on", "mats"], ["dogs", "run", "in", "the", "park"]]
    with torch.no_grad():
        out1, attn1 = single(x)
        out2, attn2 = multi(x)
    common = dict(mode="self", scale="inv_sqrt_dk", maskFill="-inf", query={"tokens": tokens, "x": nested(x)})
    write(4, "single-head", header(
        4, "单头自注意力 Self_Attention（dk = 4，dv = 6，带偏置） — "
           "Single-head Self_Attention (dk = 4, dv = 6, with bias)",
        heads=1, headDimQK=dk, headDimV=dv, **common,
        weights={"q": nested(single.q.weight.T), "k": nested(single.k.weight.T), "v": nested(single.v.weight.T),
                 "o": None, "qBias": vec(single.q.bias), "kBias": vec(single.k.bias), "vBias": vec(single.v.bias)}),
        attn1[:, None], out1)
    write(4, "multi-head", header(
        4, "多头注意力 MultiHeadAttention（2 个头，dk = 4，dv = 6，带偏置） — "
           "MultiHeadAttention (2 heads, dk = 4, dv = 6, with bias)",
        heads=heads, headDimQK=dk, headDimV=dv, **common,
        weights={"q": nested(multi.q_linear.weight.T), "k": nested(multi.k_linear.weight.T),
                 "v": nested(multi.v_linear.weight.T), "o": nested(multi.out_linear.weight.T),
                 "qBias": vec(multi.q_linear.bias), "kBias": vec(multi.k_linear.bias),
                 "vBias": vec(multi.v_linear.bias), "oBias": vec(multi.out_linear.bias)}),
        attn2, out2)


def tutorial5():
    copy_fixture(5, "mha-three-inputs", "seed004_mha_three_inputs",
                 "多头注意力 MultiHeadAttention(d_model, num_heads)：query、key、value 是三个不同的输入 — "
                 "MultiHeadAttention(d_model, num_heads) on three different inputs: query, key and value")


if __name__ == "__main__":
    for folder in FOLDERS.values():
        shutil.rmtree(EXAMPLES / folder, ignore_errors=True)
    shutil.rmtree(EXPECTED, ignore_errors=True)
    tutorial1()
    tutorial2()
    tutorial3()
    tutorial4()
    tutorial5()
    print("wrote", EXAMPLES, "and", EXPECTED)
