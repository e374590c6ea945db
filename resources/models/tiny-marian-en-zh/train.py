#!/usr/bin/python3
"""Trains AttnScope's built-in translation example: a tiny Marian model from English to Chinese.

What: an encoder-decoder of the Marian architecture as Hugging Face's MarianMTModel runs it
(post-LN layers, sinusoidal positions, scaled and shared embeddings, swish, final_logits_bias),
small enough to ship, written as an opus-mt folder: config.json, generation_config.json,
model.safetensors (float32, transformers' tensor names), source.spm and target.spm (SentencePiece
models trained here: BPE for English, unigram for Chinese, see SOURCE_SPM), vocab.json (the joint
vocabulary: `</s>` 0, `<unk>` 1, the pieces of both models, `<pad>` last), tokenizer_config.json,
and examples.json (example sentences with their source ids and greedy output ids). AttnScope opens
it offline to show cross-attention aligning English and Chinese words.

Data: Debian has no freely licensed English-Chinese parallel text handy, so the pairs are
generated from templates (sentences.py beside this script): counts with measure words, things
under and behind things, activities at places and times, questions, dates and number words,
chosen so that word order differs between the languages. A tenth of the combinations (a verb,
noun and adjective; an activity and a place; a month and a year; ...) is held out as the test set
(exact-match accuracy of greedy decoding on 1,500 of its pairs is printed).

The forward follows transformers' modeling_marian.py exactly (the C++ loader reproduces it);
greedy decoding follows generate(num_beams=1): start from decoder_start_token_id (the pad id),
never emit the pad id, force `</s>` at max_length - 1, stop after `</s>`.

    apt-get install python3-torch python3-numpy python3-sentencepiece
    resources/models/tiny-marian-en-zh/train.py      # about 12 minutes on one core, writes here
    OUT=/tmp/m STEPS=200 resources/models/tiny-marian-en-zh/train.py   # a quick look elsewhere
    resources/models/tiny-marian-en-zh/check_folder.py   # the written folder, by a numpy forward

One cross-attention head (GUIDED, layer 2 head 0) is also trained towards the templates' word
alignment, as Marian's --guided-alignment does, so that the example shows a clean alignment head;
the other heads learn what they learn (the README has the measured figures).

Reproducible: fixed seeds, one thread by default (THREADS), a data set drawn from a seeded
generator, SentencePiece trained on one thread from that data; a rerun writes the same files byte
for byte. After training it prints the test accuracy, example translations (with their ids, which
the README lists so the C++ forward can be checked against them) and, per cross-attention head,
how often a target token's strongest source token is the one it translates (the gold alignment
comes from the templates).
"""

import io
import json
import math
import os
import pathlib
import random
import struct
import sys
import time

# OpenBLAS starts its own threads, which spin on a busy machine: as many as THREADS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ.get("THREADS", "1"))
os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("THREADS", "1"))

import numpy as np  # noqa: E402
import sentencepiece  # noqa: E402
import torch  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the model folder
import sentences  # noqa: E402

OUT = pathlib.Path(os.environ.get("OUT", HERE))
WIDTH, LAYERS, HEADS, FFN = int(os.environ.get("WIDTH", "96")), int(os.environ.get("LAYERS", "3")), 4, 384
POSITIONS, MAX_LENGTH = 128, 64
PAIRS, TESTED = 40000, 1500
# English: BPE, whose 650 pieces are the whole words; unigram's likelihood on this small closed
# vocabulary splits common words (`My` -> `▁M y`, `is` -> `▁ is`) at any size. Chinese: unigram,
# about one piece per character or word (`▁我哥哥`, `星期四`, `图 书 馆`).
SOURCE_SPM, TARGET_SPM = ("bpe", 650), ("unigram", 300)
STEPS, BATCH = int(os.environ.get("STEPS", "4000")), 64
LEARNING_RATE, DROPOUT, LABEL_SMOOTHING = 2e-3, 0.1, 0.1
# Guided alignment, as Marian's --guided-alignment: one cross-attention head (layer, head) is also
# trained to put each target token's row on the source tokens it translates (the templates know
# them), with weight GUIDE_WEIGHT; every other head learns freely. Left alone, the heads align the
# row before (the token being predicted) at best 0.7 of the time, and never the token's own row,
# which is how AttnScope labels rows. GUIDE_WEIGHT=0 turns it off.
GUIDED = (LAYERS - 1, 0)
GUIDE_WEIGHT = float(os.environ.get("GUIDE_WEIGHT", "0.3"))
EXAMPLES = [
    "I have three red apples.", "The cat is under the table.", "My brother reads a book in the library.",
    "Where is the station?", "on March 5, 2024", "three hundred and five", "twenty-three",
    "There are two dogs behind the car.", "My sister was born on October 1, 1990.",
    "Today is Friday, May 1.", "How many books does Tom have?", "Does Lily like cats?",
    "We play football in the park on Saturday.", "The teacher bought four new umbrellas.",
]
# Outside what the templates make: words never seen, two clauses, a tense the activities lack.
BEYOND = ["The elephant is under the table.", "I have a cat and a dog.", "My brother read a book yesterday.",
          "It is raining.", "one thousand"]


# ---------------------------------------------------------------- tokenizer
def train_spm(texts, size, kind):
    """A SentencePiece model (serialized) over `texts`. Its own ids 0 and 1 are `</s>` and `<unk>`
    as in vocab.json, so that a tokenizer falling back to SentencePiece's id for a piece vocab.json
    lacks still gets `<unk>`."""
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=model, model_type=kind, vocab_size=size,
        hard_vocab_limit=False, character_coverage=1.0,
        normalization_rule_name="identity",  # nmt_nfkc would fold `，。？` to ASCII and ship a big table
        eos_id=0, unk_id=1, bos_id=-1, pad_id=-1, split_digits=True, num_threads=1,
        shuffle_input_sentence=False, minloglevel=2)
    return model.getvalue()


class Tokenizer:
    """MarianTokenizer's rules: SentencePiece pieces looked up in vocab.json, then `</s>`."""

    def __init__(self, source_model, target_model):
        self.source = sentencepiece.SentencePieceProcessor(model_proto=source_model)
        self.target = sentencepiece.SentencePieceProcessor(model_proto=target_model)
        pieces = []
        for model in (self.source, self.target):
            for i in range(model.get_piece_size()):
                if model.is_unknown(i) or model.is_control(i):
                    continue
                piece = model.id_to_piece(i)
                if piece not in pieces:
                    pieces.append(piece)
        self.vocab = {"</s>": 0, "<unk>": 1}
        for piece in pieces:
            self.vocab[piece] = len(self.vocab)
        self.vocab["<pad>"] = len(self.vocab)
        self.pieces = {i: p for p, i in self.vocab.items()}
        self.eos, self.unk, self.pad = 0, 1, len(self.vocab) - 1

    def encode(self, text, target=False, parts=None):
        """Ids ending in `</s>`; with `parts` ([(text, key)] whose concatenation is `text`), also
        the key of the part each token comes from (None for `</s>` and a bare `▁`)."""
        model = self.target if target else self.source
        ids, keys = [], []
        starts = []
        if parts is not None:
            at = 0
            for part_text, key in parts:
                starts.append((at, at + len(part_text), key))
                at += len(part_text)
        for piece in model.encode_as_immutable_proto(text).pieces:
            ids.append(self.vocab.get(piece.piece, self.unk))
            surface = piece.surface.strip()
            begin = piece.begin + (len(piece.surface) - len(piece.surface.lstrip()))
            keys.append(next((k for b, e, k in starts if b <= begin < e), None) if surface else None)
        return ids + [self.eos], keys + [None]


# ---------------------------------------------------------------- model (transformers' MarianMTModel)
def sinusoids(positions, dim):
    """MarianSinusoidalPositionalEmbedding: sin in the first half, cos in the second (float64, then float32)."""
    angle = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(positions)])
    table = np.concatenate([np.sin(angle[:, 0::2]), np.cos(angle[:, 1::2])], axis=1)
    return torch.tensor(table, dtype=torch.float32)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj = torch.nn.Linear(WIDTH, WIDTH), torch.nn.Linear(WIDTH, WIDTH)
        self.v_proj, self.out_proj = torch.nn.Linear(WIDTH, WIDTH), torch.nn.Linear(WIDTH, WIDTH)

    def forward(self, x, memory, mask):
        """x [B,T,d] attends to memory [B,S,d]; mask [B or 1, 1, T or 1, S] is added to the scores."""
        def heads(t):
            return t.view(t.shape[0], t.shape[1], HEADS, WIDTH // HEADS).transpose(1, 2)
        q = heads(self.q_proj(x) * (WIDTH // HEADS) ** -0.5)
        k, v = heads(self.k_proj(memory)), heads(self.v_proj(memory))
        scores = q @ k.transpose(-1, -2)
        if mask is not None:
            scores = scores + mask
        weights = scores.softmax(-1)
        drop = torch.nn.functional.dropout(weights, 0.0, self.training)
        context = (drop @ v).transpose(1, 2).reshape(x.shape[0], x.shape[1], WIDTH)
        return self.out_proj(context), weights


class Layer(torch.nn.Module):
    """A post-LN encoder layer, or with `cross` a decoder layer (self, cross, feed-forward)."""

    def __init__(self, cross):
        super().__init__()
        self.self_attn, self.self_attn_layer_norm = Attention(), torch.nn.LayerNorm(WIDTH)
        if cross:
            self.encoder_attn, self.encoder_attn_layer_norm = Attention(), torch.nn.LayerNorm(WIDTH)
        self.fc1, self.fc2 = torch.nn.Linear(WIDTH, FFN), torch.nn.Linear(FFN, WIDTH)
        self.final_layer_norm = torch.nn.LayerNorm(WIDTH)
        self.cross = cross

    def forward(self, h, mask, memory=None, memory_mask=None):
        def drop(x):
            return torch.nn.functional.dropout(x, DROPOUT, self.training)
        out, self_weights = self.self_attn(h, h, mask)
        h = self.self_attn_layer_norm(h + drop(out))
        cross_weights = None
        if self.cross:
            out, cross_weights = self.encoder_attn(h, memory, memory_mask)
            h = self.encoder_attn_layer_norm(h + drop(out))
        h = self.final_layer_norm(h + drop(self.fc2(torch.nn.functional.silu(self.fc1(h)))))
        return h, self_weights, cross_weights


class Marian(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.shared = torch.nn.Parameter(torch.randn(vocab, WIDTH) * WIDTH ** -0.5)
        self.final_logits_bias = torch.nn.Parameter(torch.zeros(1, vocab))
        self.encoder = torch.nn.ModuleList(Layer(False) for _ in range(LAYERS))
        self.decoder = torch.nn.ModuleList(Layer(True) for _ in range(LAYERS))
        self.register_buffer("positions", sinusoids(POSITIONS, WIDTH), persistent=False)

    def embed(self, ids):
        h = self.shared[ids] * math.sqrt(WIDTH) + self.positions[: ids.shape[1]]
        return torch.nn.functional.dropout(h, DROPOUT, self.training)

    def encode(self, source, source_pad=None):
        """Encoder states; `source_pad` [B,S] marks padding (training only: AttnScope has none)."""
        mask = None if source_pad is None else source_pad[:, None, None, :] * torch.finfo(torch.float32).min
        h, attentions = self.embed(source), []
        for layer in self.encoder:
            h, weights, _ = layer(h, mask)
            attentions.append(weights)
        return h, mask, attentions

    def decode(self, target, memory, memory_mask):
        """Logits [B,T,V] and the decoder's self- and cross-attentions per layer."""
        t = target.shape[1]
        causal = torch.full((t, t), torch.finfo(torch.float32).min).triu(1)[None, None]
        h, selfs, crosses = self.embed(target), [], []
        for layer in self.decoder:
            h, weights, cross = layer(h, causal, memory, memory_mask)
            selfs.append(weights)
            crosses.append(cross)
        return h @ self.shared.T + self.final_logits_bias, selfs, crosses


def greedy(model, source, pad, eos):
    """generate(num_beams=1) for equally long sources [B,S]: each row's decoder ids, start included."""
    with torch.no_grad():
        memory, _, _ = model.encode(source)
        ids = torch.full((source.shape[0], 1), pad, dtype=torch.long)
        done = torch.zeros(source.shape[0], dtype=torch.bool)
        while ids.shape[1] < MAX_LENGTH and not done.all():
            logits = model.decode(ids, memory, None)[0][:, -1]
            logits[:, pad] = -math.inf  # bad_words_ids [[pad]]
            following = logits.argmax(-1)
            if ids.shape[1] == MAX_LENGTH - 1:  # forced_eos_token_id
                following[:] = eos
            following[done] = pad  # rows already finished, as generate pads them
            ids = torch.cat([ids, following[:, None]], 1)
            done |= following == eos
    rows = []
    for row in ids.tolist():
        rows.append(row[: row.index(eos) + 1] if eos in row else row)
    return rows


# ---------------------------------------------------------------- data
def tokenize_pairs(tokenizer, pairs):
    rows = []
    for pair, _ in pairs:
        source, source_keys = tokenizer.encode(pair.source(), parts=source_parts(pair))
        target, target_keys = tokenizer.encode(pair.target(), target=True, parts=pair.chinese)
        rows.append((source, target, source_keys, target_keys))
    return rows


def source_parts(pair):
    parts = list(pair.english)
    if pair.capitalize and parts:
        parts[0] = (parts[0][0][:1].upper() + parts[0][0][1:], parts[0][1])
    return parts


def batch(rows, pad):
    """Padded source [B,S], its padding mask, decoder input [B,T] (start, pieces), labels [B,T],
    and the gold alignment of each decoder row [B,T,S] (rows summing to 1, or 0 where unknown)."""
    s = max(len(r[0]) for r in rows)
    t = max(len(r[1]) for r in rows)
    source = torch.full((len(rows), s), pad, dtype=torch.long)
    inputs = torch.full((len(rows), t), pad, dtype=torch.long)
    labels = torch.full((len(rows), t), -100, dtype=torch.long)
    gold = torch.zeros(len(rows), t, s)
    for i, (src, tgt, source_keys, target_keys) in enumerate(rows):
        source[i, : len(src)] = torch.tensor(src)
        inputs[i, : len(tgt)] = torch.tensor([pad] + tgt[:-1])
        labels[i, : len(tgt)] = torch.tensor(tgt)
        for j, keys in enumerate(target_keys[:-1]):  # row j + 1 holds target token j
            aligned = [k for k, key in enumerate(source_keys) if key is not None and keys and key in keys]
            if aligned:
                gold[i, j + 1, aligned] = 1.0 / len(aligned)
    return source, (source == pad).float(), inputs, labels, gold


# ---------------------------------------------------------------- measuring
def accuracy(model, rows, tokenizer):
    """Exact-match rate of greedy decoding against the references (sources grouped by length, so
    that no row is padded)."""
    model.eval()
    by_length = {}
    for i, row in enumerate(rows):
        by_length.setdefault(len(row[0]), []).append(i)
    right = [False] * len(rows)
    for length in sorted(by_length):
        members = by_length[length]
        for at in range(0, len(members), 256):
            chunk = members[at: at + 256]
            outputs = greedy(model, torch.tensor([rows[i][0] for i in chunk]), tokenizer.pad, tokenizer.eos)
            for i, output in zip(chunk, outputs):
                right[i] = output[1:] == rows[i][1]
    model.train()
    return right


def alignment(model, rows, pad):
    """Per decoder layer and head, the fraction of target tokens whose strongest source token (in
    the cross-attention) is one they translate: [0] on the token's own row (the row AttnScope
    labels with it), [1] on the row before, where the token is being predicted."""
    model.eval()
    hits, total = torch.zeros(2, LAYERS, HEADS), 0
    with torch.no_grad():
        for source, target, source_keys, target_keys in rows:
            memory, _, _ = model.encode(torch.tensor([source]))
            _, _, crosses = model.decode(torch.tensor([[pad] + target]), memory, None)
            strongest = torch.stack([c[0].argmax(-1) for c in crosses])  # [L,H,T+1]
            for j, keys in enumerate(target_keys):
                gold = [i for i, k in enumerate(source_keys) if k is not None and keys and k in keys]
                if not gold:
                    continue
                total += 1
                for row, which in ((j + 1, 0), (j, 1)):
                    hits[which] += torch.isin(strongest[:, :, row], torch.tensor(gold)).float()
    model.train()
    return hits / max(total, 1), total


def translate(model, tokenizer, text):
    source, _ = tokenizer.encode(text)
    model.eval()
    output = greedy(model, torch.tensor([source]), tokenizer.pad, tokenizer.eos)[0]
    model.train()
    pieces = [tokenizer.pieces[i] for i in output[1:] if i != tokenizer.eos]
    return source, output, tokenizer.target.decode_pieces(pieces).replace("\u2581", " ").strip()


# ---------------------------------------------------------------- saving
def write_safetensors(path, tensors):
    """The safetensors layout: an 8-byte little-endian header size, a JSON header, the data."""
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        blob = tensor.detach().contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"format": "pt", "trainer": "resources/models/tiny-marian-en-zh/train.py"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
    tmp.replace(path)


def write_json(name, value):
    (OUT / name).write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def save(model, tokenizer, source_model, target_model):
    OUT.mkdir(parents=True, exist_ok=True)
    tensors = {"model.shared.weight": model.shared}
    for side, layers in (("encoder", model.encoder), ("decoder", model.decoder)):
        for i, layer in enumerate(layers):
            prefix = "model.%s.layers.%d." % (side, i)
            names = ["self_attn", "self_attn_layer_norm", "fc1", "fc2", "final_layer_norm"]
            if layer.cross:
                names[1:1] = ["encoder_attn", "encoder_attn_layer_norm"]
            for name, tensor in layer.state_dict(keep_vars=True).items():
                if name.split(".")[0] in names:
                    tensors[prefix + name] = tensor
    tensors["final_logits_bias"] = model.final_logits_bias
    write_safetensors(OUT / "model.safetensors", tensors)
    (OUT / "source.spm").write_bytes(source_model)
    (OUT / "target.spm").write_bytes(target_model)
    write_json("vocab.json", tokenizer.vocab)
    vocab, pad, eos = len(tokenizer.vocab), tokenizer.pad, tokenizer.eos
    write_json("config.json", {
        "model_type": "marian", "architectures": ["MarianMTModel"], "torch_dtype": "float32",
        "vocab_size": vocab, "decoder_vocab_size": vocab, "d_model": WIDTH,
        "encoder_layers": LAYERS, "decoder_layers": LAYERS, "num_hidden_layers": LAYERS,
        "encoder_attention_heads": HEADS, "decoder_attention_heads": HEADS,
        "encoder_ffn_dim": FFN, "decoder_ffn_dim": FFN, "activation_function": "swish",
        "max_position_embeddings": POSITIONS, "scale_embedding": True, "static_position_embeddings": True,
        "normalize_before": False, "normalize_embedding": False, "add_final_layer_norm": False,
        "add_bias_logits": False, "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True,
        "dropout": DROPOUT, "attention_dropout": 0.0, "activation_dropout": 0.0, "classifier_dropout": 0.0,
        "encoder_layerdrop": 0.0, "decoder_layerdrop": 0.0, "init_std": 0.02, "is_encoder_decoder": True,
        "use_cache": True, "pad_token_id": pad, "eos_token_id": eos, "bos_token_id": eos,
        "decoder_start_token_id": pad, "forced_eos_token_id": eos, "bad_words_ids": [[pad]],
        "max_length": MAX_LENGTH, "num_beams": 1})
    write_json("generation_config.json", {
        "bad_words_ids": [[pad]], "bos_token_id": eos, "decoder_start_token_id": pad, "eos_token_id": eos,
        "forced_eos_token_id": eos, "max_length": MAX_LENGTH, "num_beams": 1, "pad_token_id": pad})
    write_json("tokenizer_config.json", {
        "source_lang": "en", "target_lang": "zh", "unk_token": "<unk>", "eos_token": "</s>",
        "pad_token": "<pad>", "model_max_length": POSITIONS, "sp_model_kwargs": {}, "separate_vocabs": False,
        "tokenizer_class": "MarianTokenizer"})


# ---------------------------------------------------------------- training
def main():
    torch.manual_seed(2026)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    begun = time.time()
    pairs = sentences.generate(2026, PAIRS)
    train_pairs, test_pairs = sentences.split(pairs, 7)
    test_pairs = random.Random(5).sample(test_pairs, min(TESTED, len(test_pairs)))
    source_model = train_spm([p.source() for p, _ in train_pairs], SOURCE_SPM[1], SOURCE_SPM[0])
    target_model = train_spm([p.target() for p, _ in train_pairs], TARGET_SPM[1], TARGET_SPM[0])
    tokenizer = Tokenizer(source_model, target_model)
    train_rows = tokenize_pairs(tokenizer, train_pairs)
    test_rows = tokenize_pairs(tokenizer, test_pairs)
    test_kinds = [c[0] for _, c in test_pairs]
    unknown = sum(r[0].count(tokenizer.unk) + r[1].count(tokenizer.unk) for r in train_rows + test_rows)
    print("pairs: %d training, %d test; vocabulary %d (%d unknown tokens); %.0f s" % (
        len(train_rows), len(test_rows), len(tokenizer.vocab), unknown, time.time() - begun), file=sys.stderr)
    watch = random.Random(3).sample(range(len(test_rows)), min(300, len(test_rows)))

    model = Marian(len(tokenizer.vocab))
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.98), weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LEARNING_RATE, total_steps=max(STEPS, 10),
                                                   pct_start=0.06)
    generator = torch.Generator().manual_seed(7)
    order, at = torch.randperm(len(train_rows), generator=generator).tolist(), 0
    for step in range(STEPS):
        if at + BATCH > len(order):
            order, at = torch.randperm(len(train_rows), generator=generator).tolist(), 0
        source, source_pad, inputs, labels, gold = batch([train_rows[i] for i in order[at: at + BATCH]],
                                                          tokenizer.pad)
        at += BATCH
        memory, memory_mask, _ = model.encode(source, source_pad)
        logits, _, crosses = model.decode(inputs, memory, memory_mask)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                 ignore_index=-100, label_smoothing=LABEL_SMOOTHING)
        if GUIDE_WEIGHT:
            guided = crosses[GUIDED[0]][:, GUIDED[1]]
            known = gold.sum(-1) > 0
            loss = loss + GUIDE_WEIGHT * -(gold * torch.log(guided + 1e-9)).sum(-1)[known].mean()
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        if step % 100 == 0 or step == STEPS - 1:
            print("step %d: loss %.3f (%.0f s)" % (step, loss.item(), time.time() - begun), flush=True,
                  file=sys.stderr)
        if (step + 1) % 1000 == 0 and step != STEPS - 1:
            right = accuracy(model, [test_rows[i] for i in watch], tokenizer)
            print("  test exact match (300 sentences): %.3f" % (sum(right) / len(right)), flush=True, file=sys.stderr)

    right = accuracy(model, test_rows, tokenizer)
    print("test exact match: %d of %d (%.1f%%)" % (sum(right), len(right), 100 * sum(right) / len(right)))
    for kind in sorted(set(test_kinds)):
        mine = [r for r, k in zip(right, test_kinds) if k == kind]
        print("  %-10s %d of %d (%.1f%%)" % (kind, sum(mine), len(mine), 100 * sum(mine) / len(mine)))
    scores, total = alignment(model, [test_rows[i] for i in watch], tokenizer.pad)
    print("cross-attention: fraction of %d aligned target tokens whose strongest source token they translate" % total)
    for which, label in ((0, "on the token's own row"), (1, "on the row predicting it")):
        print("  " + label)
        for layer in range(LAYERS):
            print("    layer %d: %s" % (layer, " ".join("%.2f" % x for x in scores[which, layer].tolist())))
    examples = []
    for text in EXAMPLES:
        source, output, translation = translate(model, tokenizer, text)
        print("%s -> %s\n  source ids %s\n  output ids %s" % (text, translation, source, output))
        examples.append({"source": text, "source_ids": source, "output_ids": output, "translation": translation})
    print("wrong on the test set (source, reference, output):")
    wrong = [pair for (pair, _), ok in zip(test_pairs, right) if not ok]
    for pair in wrong[:12]:
        print("  %s | %s | %s" % (pair.source(), pair.target(), translate(model, tokenizer, pair.source())[2]))
    print("beyond the templates:")
    for text in BEYOND:
        print("  %s -> %s" % (text, translate(model, tokenizer, text)[2]))
    save(model, tokenizer, source_model, target_model)
    write_json("examples.json", examples)
    print("wrote %s (%.0f s)" % (OUT, time.time() - begun), file=sys.stderr)


if __name__ == "__main__":
    main()
