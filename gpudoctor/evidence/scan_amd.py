"""Read AMD's files into JSON-able evidence records: the KFD topology, ROCm installs, device nodes.

Files only, no commands; every function takes ``root`` so the same code reads a chroot or a container's
file system. Interpretation happens in ``gpudoctor.facts``. Every function returns a record and never raises:
an unreadable file is recorded as missing, not as a crash. Paths in the records are the machine's own paths
(without ``root``), so a record reads the same whichever root it was taken from.
"""

from __future__ import annotations

import glob
import os
import stat

KFD_TOPOLOGY = "/sys/class/kfd/kfd/topology"
# An MI300X box in CPX mode has 64+ KFD nodes with 63 io_links each (4000+ files): bounded, never unbounded.
MAX_KFD_NODES = 256
MAX_LINKS_PER_NODE = 128
MAX_MEM_BANKS = 16
MAX_LINK_FILES = 20_000  # all io_links and p2p_links together
SYSFS_READ_LIMIT = 8_000  # a KFD properties file is about 1 KB
# The link fields a link record keeps: a CPX box has 8000+ link files, and their other fields (SDMA engine masks,
# reserved versions) would double the record for nothing the parser reads.
LINK_FIELDS = (
    "type",
    "node_from",
    "node_to",
    "weight",
    "hops",
    "min_latency",
    "max_latency",
    "min_bandwidth",
    "max_bandwidth",
    "flags",
)
MAX_ROCM_INSTALLS = 32
MAX_INFO_FILES = 16
MAX_DEVICE_NODES = 512
DEVICE_NODE_PATTERNS = ("/dev/kfd", "/dev/dri/card*", "/dev/dri/renderD*", "/dev/accel*", "/dev/accel/*", "/dev/vfio/*")


def _join(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/")) if root not in ("", "/") else path


def _strip_root(root: str, path: str) -> str:
    """The machine's own path of a file found under ``root``."""
    if root in ("", "/"):
        return path
    base = os.path.join(root, "")
    return "/" + path[len(base) :] if path.startswith(base) else path


def _read(path: str, limit: int = SYSFS_READ_LIMIT) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except (OSError, ValueError):
        return None


def _numbered(directory: str, limit: int) -> tuple[list[str], bool]:
    """The numeric entries of a sysfs directory in numeric order (at most ``limit``), and whether any were cut."""
    try:
        names = [name for name in os.listdir(directory) if name.isascii() and name.isdigit()]
    except OSError:
        return [], False
    names.sort(key=int)
    return names[:limit], len(names) > limit


def _link_text(text: str | None) -> str | None:
    if text is None:
        return None
    kept = [line for line in text.splitlines() if line.split(" ", 1)[0] in LINK_FIELDS]
    return "\n".join(kept) + "\n" if kept else ""


def scan_kfd_topology(root: str = "/") -> dict[str, object]:
    """/sys/class/kfd/kfd/topology: every node's properties, gpu_id, name, io_links, p2p_links and mem_banks,
    as text (link files keep only ``LINK_FIELDS``); caches are left out. Bounded by the ``MAX_*`` caps."""
    try:
        return _scan_kfd(root)
    except Exception as exc:  # noqa: BLE001 - a scan never crashes the collection
        return {"readable": False, "path": KFD_TOPOLOGY, "error": f"{type(exc).__name__}: {exc}", "nodes": {}}


def _scan_kfd(root: str) -> dict[str, object]:
    base = _join(root, KFD_TOPOLOGY)
    nodes_dir = os.path.join(base, "nodes")
    if not os.path.isdir(nodes_dir):
        error = "no such directory (amdgpu not loaded, or no AMD GPU)" if not os.path.exists(base) else "no nodes"
        return {"readable": False, "path": KFD_TOPOLOGY, "error": error, "nodes": {}}
    node_names, truncated = _numbered(nodes_dir, MAX_KFD_NODES)
    nodes: dict[str, object] = {}
    link_files = 0
    for name in node_names:
        path = os.path.join(nodes_dir, name)
        record: dict[str, object] = {}
        for attribute in ("properties", "gpu_id", "name"):
            value = _read(os.path.join(path, attribute))
            if value is not None:
                record[attribute] = value
        for kind in ("io_links", "p2p_links"):
            links: dict[str, str] = {}
            link_names, cut = _numbered(os.path.join(path, kind), MAX_LINKS_PER_NODE)
            for link in link_names:
                if link_files >= MAX_LINK_FILES:
                    cut = True
                    break
                text = _link_text(_read(os.path.join(path, kind, link, "properties")))
                link_files += 1
                if text is not None:
                    links[link] = text
            truncated = truncated or cut
            if links:
                record[kind] = links
        banks: dict[str, str] = {}
        bank_names, cut = _numbered(os.path.join(path, "mem_banks"), MAX_MEM_BANKS)
        truncated = truncated or cut
        for bank in bank_names:
            text = _read(os.path.join(path, "mem_banks", bank, "properties"))
            if text is not None:
                banks[bank] = text
        if banks:
            record["mem_banks"] = banks
        nodes[name] = record
    result: dict[str, object] = {"readable": True, "path": KFD_TOPOLOGY, "nodes": nodes, "truncated": truncated}
    for attribute in ("generation_id", "system_properties"):
        value = _read(os.path.join(base, attribute))
        if value is not None:
            result[attribute] = value
    return result


def scan_rocm_install(root: str = "/") -> dict[str, object]:
    """ROCm installs: /opt/rocm and /opt/rocm-* with their .info/version* files, and where /opt/rocm points."""
    try:
        return _scan_rocm(root)
    except Exception as exc:  # noqa: BLE001 - a scan never crashes the collection
        return {"installs": [], "error": f"{type(exc).__name__}: {exc}"}


def _scan_rocm(root: str) -> dict[str, object]:
    rocm = _join(root, "/opt/rocm")
    candidates = [rocm] + sorted(glob.glob(_join(root, "/opt/rocm-*")))
    installs: list[dict[str, object]] = []
    seen: set[str] = set()
    for path in candidates[:MAX_ROCM_INSTALLS]:
        if not os.path.isdir(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        info_dir = os.path.join(real, ".info")
        try:
            info_names = sorted(n for n in os.listdir(info_dir) if n.startswith("version"))[:MAX_INFO_FILES]
        except OSError:
            info_names = []
        versions = {n: text for n in info_names if (text := _read(os.path.join(info_dir, n), limit=400)) is not None}
        installs.append(
            {
                "path": _strip_root(root, path),
                "realpath": _strip_root(root, real),
                "is_link": os.path.islink(path),
                "info": versions,
            }
        )
    points_to: str | None = None
    if os.path.islink(rocm):
        points_to = _strip_root(root, os.path.realpath(rocm))
    return {
        "installs": installs,
        "opt_rocm_exists": os.path.exists(rocm),
        "opt_rocm_link": points_to,
    }


def _group_name(gid: int) -> str | None:
    try:
        import grp  # POSIX only; a scan on another platform names no groups

        return grp.getgrgid(gid).gr_name
    except (ImportError, KeyError, OverflowError, OSError):
        return None


def _node_record(path: str) -> dict[str, object]:
    try:
        info = os.stat(path)
    except OSError as exc:
        return {"error": exc.strerror or str(exc)}
    char = stat.S_ISCHR(info.st_mode)
    return {
        "char_device": char,
        "directory": stat.S_ISDIR(info.st_mode),
        "mode": oct(stat.S_IMODE(info.st_mode)),
        "uid": info.st_uid,
        "gid": info.st_gid,
        "group": _group_name(info.st_gid),
        "major": os.major(info.st_rdev) if char else None,
        "minor": os.minor(info.st_rdev) if char else None,
        "readable": os.access(path, os.R_OK),
        "writable": os.access(path, os.W_OK),
    }


def scan_accel_device_nodes(root: str = "/") -> dict[str, object]:
    """/dev/kfd, /dev/dri/*, /dev/accel*, /dev/vfio/*: type, mode, owner group, whether this user may open
    them; and this user's groups by name."""
    try:
        return _scan_nodes(root)
    except Exception as exc:  # noqa: BLE001 - a scan never crashes the collection
        return {"nodes": {}, "groups": [], "error": f"{type(exc).__name__}: {exc}"}


def _scan_nodes(root: str) -> dict[str, object]:
    nodes: dict[str, object] = {}
    for pattern in DEVICE_NODE_PATTERNS:
        for path in sorted(glob.glob(_join(root, pattern))):
            if len(nodes) >= MAX_DEVICE_NODES:
                break
            nodes[_strip_root(root, path)] = _node_record(path)
    getuid = getattr(os, "getuid", None)
    uid = getuid() if getuid is not None else None
    try:
        gids = sorted(set(os.getgroups()) | ({os.getgid()} if hasattr(os, "getgid") else set()))
    except (AttributeError, OSError):
        gids = []
    groups = [{"gid": gid, "name": _group_name(gid)} for gid in gids]
    return {
        "nodes": nodes,
        "dri_directory": os.path.isdir(_join(root, "/dev/dri")),
        "uid": uid,
        "root": uid == 0,
        "groups": groups,
    }
