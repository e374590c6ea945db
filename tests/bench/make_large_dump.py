"""A Q/K dump shaped like a 70B model's (80 layers, 64 query heads on 8 key/value heads of 128
dimensions) at T = 1024, BF16: about 1.4 GiB of layer files, for `gui_attention_open --dump` (the
window's memory when it opens a dump of a model too large for a desktop). Not a test: q and k are
random, with a bias towards recent keys and the first key so the maps are not uniform.

    /usr/bin/python3 tests/bench/make_large_dump.py OUT_DIR [layers] [tokens]
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnscope_qk  # noqa: E402


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    t = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    h, kv, hd = 64, 8, 128
    rng = np.random.default_rng(25)
    # A shared direction per position makes nearby queries and keys alike (a local pattern).
    pos = rng.standard_normal((t, hd)).astype(np.float32)
    pos = np.cumsum(pos, axis=0) / np.sqrt(np.arange(1, t + 1))[:, None]
    dump = []
    for _ in range(layers):
        q = rng.standard_normal((t, h, hd), dtype=np.float32) + pos[:, None, :]
        k = rng.standard_normal((t, kv, hd), dtype=np.float32) + pos[:, None, :]
        k[0] += 3.0  # a sink on the first key
        dump.append({"q": q, "k": k, "scale": hd ** -0.5, "causal": True})
    attnscope_qk.write_dump(out, dump, tokens=["t%d" % i for i in range(t)], dtype="BF16")


if __name__ == "__main__":
    main()
