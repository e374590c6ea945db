#!/usr/bin/python3
"""Writes the ZIP64 inputs of fuzz_attentionfile: seeds in corpus/attentionfile and the
regressions of the ZIP64 end-record check in regressions/attentionfile.

Run once with Debian's python3 and commit the output; CI only reads it.
Neither numpy.savez nor Python's zipfile writes the ZIP64 end-of-directory record unless an
archive passes 4 GiB or 65535 members (force_zip64 only adds local extra fields), so the
archives are laid out here by hand, as a writer that always uses ZIP64 (Java's, 7-Zip's
"-mzip64") does: every size and offset of the directory in the ZIP64 extra field, the
end-of-directory record saying "see the ZIP64 record" (0xffff, 0xffffffff). zipfile reads each
seed back (and numpy.load, where python3-numpy is installed) before it is written.
"""
import io
import math
import pathlib
import random
import struct
import zipfile
import zlib

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "attentionfile"
REGRESSIONS = HERE / "regressions" / "attentionfile"


def npy_bytes(shape, values):
    """A float32 little-endian C-order .npy, version 1.0, as numpy.save writes it."""
    dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(
        f"<{len(values)}f", *values)


def zip64_archive(members):
    """members: (name, data, deflate). Returns (archive, offset of the ZIP64 end record)."""
    out = bytearray()
    directory = bytearray()
    for name, data, deflate in members:
        raw = name.encode()
        if deflate:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            stored = c.compress(data) + c.flush()
        else:
            stored = data
        crc = zlib.crc32(data)
        method = 8 if deflate else 0
        offset = len(out)
        # Local header: sizes in its ZIP64 extra field too (as force_zip64 writes them).
        local_extra = struct.pack("<HHQQ", 1, 16, len(data), len(stored))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                           len(raw), len(local_extra))
        out += raw + local_extra + stored
        # Directory entry: size, compressed size and offset all in the extra field, in that order.
        extra = struct.pack("<HHQQQ", 1, 24, len(data), len(stored), offset)
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0x21, crc, 0xFFFFFFFF,
                                 0xFFFFFFFF, len(raw), len(extra), 0, 0, 0, 0, 0xFFFFFFFF)
        directory += raw + extra
    dir_offset = len(out)
    out += directory
    record = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(members), len(members), len(directory),
                       dir_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, record, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out), record


def checked(archive, expected):
    """expected: member name -> its bytes."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        assert z.testzip() is None
        for name, data in expected.items():
            assert z.read(name) == data, name
    try:
        import numpy as np
    except ImportError:
        return archive
    with np.load(io.BytesIO(archive)) as f:
        for name in expected:
            assert f[name.removesuffix(".npy")].size > 0, name
    return archive


def short_archive_with_locator(record_offset):
    """46 bytes: a local-header magic (so the container is told as ZIP), a ZIP64 locator pointing
    at record_offset, and an end-of-directory record that defers to the ZIP64 one. Before the
    fix, `zip.size() - 56` wrapped for such a file and the record was read from record_offset."""
    out = b"PK\x03\x04" + struct.pack("<IIQI", 0x07064B50, 0, record_offset, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    assert len(out) == 46
    return out


def main():
    # [2 layers, 2 heads, 5, 5] softmax rows.
    rng = random.Random(64)
    values = []
    for _ in range(2 * 2 * 5):
        row = [math.exp(rng.gauss(0, 1)) for _ in range(5)]
        values += [v / sum(row) for v in row]
    attentions = npy_bytes((2, 2, 5, 5), values)
    ids = npy_bytes((5,), [0.0, 1.0, 2.0, 3.0, 4.0])

    stored, _ = zip64_archive([("attentions.npy", attentions, False)])
    (CORPUS / "lhtt_zip64_stored.npz").write_bytes(checked(stored, {"attentions.npy": attentions}))
    deflated, record = zip64_archive([("attentions.npy", attentions, True), ("ids.npy", ids, True)])
    (CORPUS / "lhtt_zip64_deflated.npz").write_bytes(checked(deflated, {"attentions.npy": attentions, "ids.npy": ids}))
    # The harness's second pass appends its own ZIP64 locator and end-of-directory record, the
    # locator pointing at the input's last 56 bytes: this body becomes the whole archive again.
    (CORPUS / "zip64-body-without-end-records").write_bytes(deflated[:record + 56])

    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    (REGRESSIONS / "zip64-locator-in-46-bytes-past-end").write_bytes(short_archive_with_locator(46))
    (REGRESSIONS / "zip64-locator-in-46-bytes-far").write_bytes(short_archive_with_locator(1 << 40))


if __name__ == "__main__":
    main()
