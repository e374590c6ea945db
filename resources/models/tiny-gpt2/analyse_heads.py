#!/usr/bin/python3
"""Measures what each head of the example model does, through AttnScope's own CLI.

    resources/models/tiny-gpt2/analyse_heads.py build/ci/bin/attnscope-cli

Runs the model (`attnscope-cli model`) on two inputs and prints, per layer and head:
- previous: the mean weight a query puts on the token just before it, on a paragraph of text;
- induction: on the same paragraph written twice, the mean weight a query in the second copy puts
  on the token after the earlier occurrence of its own token (the induction pattern);
- first: the mean weight on the first token (a "sink" that heads with nothing to do park on).
Needs numpy (Debian's python3-numpy).
"""

import json
import pathlib
import subprocess
import sys
import tempfile

import numpy

HERE = pathlib.Path(__file__).resolve().parent
TEXT = ("When you run a Python script, the interpreter reads the file, compiles it to byte code "
        "and runs it. A list is a mutable sequence; a tuple is an immutable one. The for statement "
        "iterates over the items of any sequence, in the order that they appear in the sequence.")


def attentions(cli, args):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([cli, "model", str(HERE), *args, "--out", out], check=True, capture_output=True)
        tokens = json.loads((pathlib.Path(out) / "tokens.json").read_text(encoding="utf-8"))
        return numpy.load(pathlib.Path(out) / "attentions.npy").astype(numpy.float64), tokens["ids"]


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else "attnscope-cli"
    text, _ = attentions(cli, ["--text", TEXT])
    repeated, ids = attentions(cli, ["--text", TEXT + " " + TEXT])
    # For each query, the position just after the latest earlier occurrence of its token.
    targets = {}
    for i in range(1, len(ids)):
        for j in range(i - 1, 0, -1):
            if ids[j - 1] == ids[i]:
                targets[i] = j
                break
    layers, heads = text.shape[:2]
    print("layer head previous induction first")
    for l in range(layers):
        for h in range(heads):
            a = text[l, h]
            previous = numpy.mean([a[i, i - 1] for i in range(1, a.shape[0])])
            r = repeated[l, h]
            induction = numpy.mean([r[i, j] for i, j in targets.items()])
            first = numpy.mean(a[1:, 0])
            print(f"{l} {h} {previous:.3f} {induction:.3f} {first:.3f}")


if __name__ == "__main__":
    main()
