"""``ldconfig -p``: what the dynamic loader's cache says each library name resolves to.

A pure parser.  It accepts the full listing (header line, tab-indented entries)
and the pasted ``ldconfig -p | grep X`` form (space indents, a prompt line);
any line that is not an entry is skipped.
"""

from __future__ import annotations

import re

from gpudoctor.facts.model import LoaderCacheEntry

# "libcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1".  The path is
# everything after "=>" so a directory with spaces survives.
_ENTRY = re.compile(r"^\s*(?P<soname>\S+)\s+\((?P<flags>[^)]*)\)\s*=>\s*(?P<path>\S.*)$")
# Flags that describe the file's ABI note or hwcaps subdirectory rather than its
# architecture: "(libc6,x86-64, OS ABI: Linux 3.2.0)", "(libc6,x86-64, hwcap: 0x...)".
_NOT_ARCH = ("os abi:", "hwcap:")


def _arch(flags: str) -> str | None:
    parts = [part.strip() for part in flags.split(",")]
    kept = [part for part in parts if part and not part.lower().startswith(_NOT_ARCH)]
    return ",".join(kept) or None


def parse_ldconfig(text: object) -> list[LoaderCacheEntry]:
    """Parse ``ldconfig -p`` output into entries, in the cache's order."""
    entries: list[LoaderCacheEntry] = []
    if not isinstance(text, str):
        return entries
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            entries.append(
                LoaderCacheEntry(
                    soname=match.group("soname"), arch=_arch(match.group("flags")), path=match.group("path").rstrip()
                )
            )
    return entries


def find_libraries(entries: object, prefix: str) -> list[LoaderCacheEntry]:
    """The entries whose soname starts with ``prefix`` ("libcuda.so" finds libcuda.so and libcuda.so.1).

    A plain prefix: "libcuda" would also find libcudart and libcudnn, so pass the
    ".so" when you mean one library.
    """
    if not isinstance(entries, (list, tuple)) or not isinstance(prefix, str):
        return []
    return [
        entry
        for entry in entries
        if isinstance(entry, LoaderCacheEntry) and isinstance(entry.soname, str) and entry.soname.startswith(prefix)
    ]
