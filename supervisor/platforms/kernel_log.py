"""Kernel log checks.

Linux: /dev/kmsg records ("prio,seq,usec,flags;message") read by sequence
number, so the position taken before an execution is exact even when the
ring buffer wraps.  OpenBSD: the `dmesg` text, diffed against the text
taken before.  New lines that no allow-list regex matches flag the run.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass

from supervisor.system import SystemRoot

# Harmless lines (network links coming and going, interrupt setup, GPU power
# states); written for both traditional (eth0) and predictable (enp3s0,
# wlp2s0) interface names.  Matched with re.search.
DEFAULT_ALLOW = [
    r"ADDRCONF\(NETDEV_(UP|CHANGE)\)",
    r"NIC Link is (Up|Down)",
    r"irq .* for MSI/MSI-X",
    r"\b(eth|en|wl|ww)\w*: [Ll]ink (is )?(up|down|Up|Down)",
    r"\b(eth|en|wl|ww)\w*: Flow control is (on|off)",
    r"\b(eth|en|wl|ww)\w*: EEE is (enabled|disabled)",
    r"\[drm\] Enabling RC6 states",
]
OPENBSD_ALLOW = [r"\(\d+\): .*W\^X violation$"]  # PyPy's JIT, reported by OpenBSD


@dataclass(frozen=True)
class KmsgRecord:
    seq: int
    priority: int
    usec: int
    message: str


def parse_kmsg_line(line: str) -> KmsgRecord | None:
    header, sep, message = line.partition(";")
    if not sep:
        return None
    fields = header.split(",")
    try:
        prio, seq, usec = int(fields[0]), int(fields[1]), int(fields[2])
    except (ValueError, IndexError):
        return None
    return KmsgRecord(seq, prio & 7, usec, message.rstrip("\n"))


def read_kmsg(root: SystemRoot) -> list[KmsgRecord] | None:
    """Every record still in the ring buffer; None when /dev/kmsg is unreadable.

    The real device returns one record per read() and EAGAIN at the end
    (O_NONBLOCK) or EPIPE when records were overwritten while reading; a
    fake root's regular file returns everything and then b"".
    """
    path = root.path("/dev/kmsg")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:
                    continue  # overwritten under us; the next read gives the oldest remaining
                raise
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(fd)
    records = []
    for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
        if line.startswith(" "):
            continue  # continuation (device dictionary) of the previous record
        rec = parse_kmsg_line(line)
        if rec is not None:
            records.append(rec)
    return records


def kmsg_position(root: SystemRoot) -> int | None:
    """Sequence number of the newest record (-1 for an empty log)."""
    records = read_kmsg(root)
    if records is None:
        return None
    return records[-1].seq if records else -1


def kmsg_since(root: SystemRoot, position: int) -> tuple[list[str], bool]:
    """Messages after ``position`` and whether some were lost to the ring buffer."""
    records = read_kmsg(root) or []
    new = [r for r in records if r.seq > position]
    lost = bool(new) and new[0].seq > position + 1
    return [r.message for r in new], lost


def dmesg_new_lines(before: str, after: str) -> tuple[list[str], bool]:
    """Lines of ``after`` beyond what ``before`` ended with (OpenBSD dmesg text).

    Anchors on the last few lines of ``before``; when they are gone (the
    buffer wrapped) every line counts as new and the second value is True.
    """
    b, a = before.splitlines(), after.splitlines()
    if not b:
        return a, False
    for k in (3, 2, 1):
        if len(b) < k:
            continue
        tail = b[-k:]
        for i in range(len(a) - k, -1, -1):
            if a[i:i + k] == tail:
                return a[i + k:], False
    return a, True


def unexpected(lines: list[str], allow: list[str]) -> list[str]:
    patterns = [re.compile(rx) for rx in allow]
    return [ln for ln in lines if not any(p.search(ln) for p in patterns)]
