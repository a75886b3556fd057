"""A file's POSIX access ACL, read from its ``system.posix_acl_access`` extended attribute.

The format is Linux's (include/uapi/linux/posix_acl_xattr.h; tags and
permission bits from include/uapi/linux/posix_acl.h): a little-endian u32
version, 2, then 8-byte entries of u16 tag, u16 permissions and u32 uid or
gid.  No attribute, a filesystem without ACLs, or a system without POSIX ACLs
(OpenBSD) means the mode bits tell all.
"""

from __future__ import annotations

import errno
import os
import struct

USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
WRITE = 0x02
ATTRIBUTE = "system.posix_acl_access"
VERSION = 2
NO_ACL = (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP)

Entry = tuple[int, int, int]   # tag, permissions, uid or gid


class UnreadableAcl(Exception):
    """An ACL that cannot be read or is not in the format above: the reason, for one line."""


def parse(data: bytes) -> list[Entry]:
    if len(data) < 4 or (len(data) - 4) % 8:
        raise UnreadableAcl(f"{len(data)} bytes, not a 4-byte header and 8-byte entries")
    version, = struct.unpack_from("<I", data)
    if version != VERSION:
        raise UnreadableAcl(f"version {version}, not {VERSION}")
    entries = list(struct.iter_unpack("<HHI", data[4:]))
    unknown = [tag for tag, _, _ in entries if tag not in (USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER)]
    if unknown:
        raise UnreadableAcl(f"unknown entry tag {unknown[0]:#x}")
    return entries


def access_acl(path: str | os.PathLike) -> list[Entry] | None:
    """``path``'s ACL entries (not following a symlink), None when it has none; raises UnreadableAcl."""
    if not hasattr(os, "getxattr"):
        return None
    try:
        data = os.getxattr(path, ATTRIBUTE, follow_symlinks=False)
    except OSError as e:
        if e.errno in NO_ACL:
            return None
        raise UnreadableAcl(e.strerror) from e
    return parse(data)


def named_writers(entries: list[Entry], tag: int) -> list[int]:
    """The uids (tag USER) or gids (tag GROUP) of named entries whose write permission survives the mask."""
    mask = next((perm for t, perm, _ in entries if t == MASK), 0o7)   # none without named entries
    return [ident for t, perm, ident in entries if t == tag and perm & mask & WRITE]
