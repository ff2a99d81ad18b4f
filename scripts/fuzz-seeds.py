#!/usr/bin/env python3
"""Seed corpora for the fuzz targets (scripts/fuzz.sh).

usage: fuzz-seeds.py OUT_DIR MAX_BYTES CAPTURE...
       fuzz-seeds.py wrap DECODE_INPUT OUT.pcap

Writes OUT_DIR/capture (whole captures, used by the `capture` and
`pipeline` targets) and OUT_DIR/decode (single frames, for `decode`).

A capture larger than MAX_BYTES is cut at the last record boundary below
it (its header and interface blocks kept), so that seeds stay small enough
for a fast fuzzer; gzip files larger than that are left out. Frames for
`decode` are one per (link type, IP version, set of SCTP chunk types) per
capture (at most FRAMES_PER_CAPTURE), non-SCTP frames included, each prefixed with the selector
byte the target reads (index into its LINK_TYPES list; bit 7: cut by the
snaplen).

`wrap` turns an input of the `decode` target into the one-frame pcap it
stands for (the link type its selector byte picks), for committing a finding
under analyzer/tests/fuzz-regressions/.
"""

import gzip
import hashlib
import os
import struct
import sys

# Must match LINK_TYPES in fuzz/src/lib.rs (index = selector).
SELECTOR = {1: 0, 113: 1, 276: 2, 101: 3, 12: 4, 228: 5, 229: 6, 0: 7, 108: 8}

# At most this many single frames from one capture.
FRAMES_PER_CAPTURE = 12

PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": "<",
    b"\xa1\xb2\xc3\xd4": ">",
    b"\x4d\x3c\xb2\xa1": "<",
    b"\xa1\xb2\x3c\x4d": ">",
}


def records(data):
    """Yields (end_offset, link_type, frame, cut) for each record, and
    (end_offset, None, None, None) for each pcapng block that is not a packet.
    Stops quietly at anything it does not understand."""
    if data[:4] in PCAP_MAGICS:
        e = PCAP_MAGICS[data[:4]]
        if len(data) < 24:
            return
        link = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
        off = 24
        yield off, None, None, None
        while off + 16 <= len(data):
            caplen, origlen = struct.unpack(e + "II", data[off + 8 : off + 16])
            end = off + 16 + caplen
            if end > len(data):
                return
            yield end, link, data[off + 16 : end], caplen < origlen
            off = end
    elif data[:4] == b"\x0a\x0d\x0d\x0a":
        off = 0
        e = "<"
        links = []
        while off + 12 <= len(data):
            btype = data[off : off + 4]
            if btype == b"\x0a\x0d\x0d\x0a":
                e = "<" if data[off + 8 : off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                links = []
            (btype,) = struct.unpack(e + "I", data[off : off + 4])
            (blen,) = struct.unpack(e + "I", data[off + 4 : off + 8])
            if blen < 12 or off + blen > len(data):
                return
            body = data[off + 8 : off + blen - 4]
            end = off + blen
            if btype == 1 and len(body) >= 2:
                links.append(struct.unpack(e + "H", body[:2])[0])
                yield end, None, None, None
            elif btype == 6 and len(body) >= 20:
                ifid, _, _, caplen, origlen = struct.unpack(e + "IIIII", body[:20])
                link = links[ifid] if ifid < len(links) else None
                yield end, link, body[20 : 20 + caplen], caplen < origlen
            else:
                yield end, None, None, None
            off = end


def sctp_key(link, frame):
    """(IP version, chunk types) of an SCTP packet in the frame, else None."""
    off = {1: 14, 113: 16, 276: 20, 0: 4, 108: 4}.get(link, 0)
    if link == 1:
        etype = frame[12:14]
        while etype in (b"\x81\x00", b"\x88\xa8") and len(frame) >= off + 4:
            etype = frame[off + 2 : off + 4]
            off += 4
    ip = frame[off:]
    if not ip:
        return None
    version = ip[0] >> 4
    if version == 4 and len(ip) >= 20 and ip[9] == 132:
        sctp = ip[(ip[0] & 0xF) * 4 :]
    elif version == 6 and len(ip) >= 40 and ip[6] == 132:
        sctp = ip[40:]
    else:
        return None
    types = set()
    pos = 12
    while pos + 4 <= len(sctp):
        types.add(sctp[pos])
        (clen,) = struct.unpack(">H", sctp[pos + 2 : pos + 4])
        if clen < 4:
            break
        pos += (clen + 3) & ~3
    return version, tuple(sorted(types))


def write(directory, data, seen):
    digest = hashlib.sha1(data).hexdigest()
    if digest in seen:
        return False
    seen.add(digest)
    with open(os.path.join(directory, digest[:16]), "wb") as f:
        f.write(data)
    return True


def wrap(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    if not data:
        sys.exit("wrap: an empty input decodes nothing")
    links = [0] * len(SELECTOR) + [0xFFFFFFFE, 147]
    for link, index in SELECTOR.items():
        links[index] = link
    link = links[(data[0] & 0x0F) % len(links)]
    frame = data[1:]
    origlen = len(frame) + (64 if data[0] & 0x80 else 0)
    with open(dst, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, link))
        f.write(struct.pack("<IIII", 0, 0, len(frame), origlen))
        f.write(frame)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "wrap":
        wrap(sys.argv[2], sys.argv[3])
        return
    out, max_bytes, inputs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    cap_dir = os.path.join(out, "capture")
    dec_dir = os.path.join(out, "decode")
    os.makedirs(cap_dir, exist_ok=True)
    os.makedirs(dec_dir, exist_ok=True)
    seen_cap, seen_dec = set(), set()
    n_cap = n_cut = n_dec = 0
    for path in inputs:
        with open(path, "rb") as f:
            raw = f.read()
        compressed = raw[:2] == b"\x1f\x8b"
        try:
            data = gzip.decompress(raw) if compressed else raw
        except (OSError, EOFError):
            continue
        if len(raw) <= max_bytes:
            n_cap += write(cap_dir, raw, seen_cap)
        elif not compressed:
            cut = 0
            for end, *_ in records(data):
                if end > max_bytes:
                    break
                cut = end
            if cut:
                n_cut += 1
                n_cap += write(cap_dir, data[:cut], seen_cap)
        keys = set()
        for _, link, frame, was_cut in records(data):
            if frame is None or link not in SELECTOR:
                continue
            key = (link, sctp_key(link, frame))
            if key in keys or len(keys) >= FRAMES_PER_CAPTURE:
                continue
            keys.add(key)
            selector = SELECTOR[link] | (0x80 if was_cut else 0)
            n_dec += write(dec_dir, bytes([selector]) + frame, seen_dec)
    print(
        f"seeds: {n_cap} captures ({n_cut} cut to {max_bytes} bytes), "
        f"{n_dec} single frames, from {len(inputs)} files"
    )


if __name__ == "__main__":
    main()
