"""Tell which evidence source a lone pasted file is, from its content.

A maintainer often gets one output pasted into an issue, saved under any name.
The markers are the outputs' own fixed strings.
"""

from __future__ import annotations

import re

_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nvidia-smi-q-x.xml", re.compile(r"<nvidia_smi_log\b")),
    ("proc-driver-nvidia-version.txt", re.compile(r"^\s*NVRM version:", re.MULTILINE)),
    ("nvcc-version.txt", re.compile(r"Cuda compilation tools|NVIDIA \(R\) Cuda compiler driver")),
    # topo -p2p before topo -m: both start with a "GPU0  X" row; only the P2P matrix has these cells and legend.
    (
        "nvidia-smi-topo-p2p-r.txt",
        re.compile(
            r"^\s*GPU0\s+X\s+(?:OK|CNS|GNS|TNS|NS|DR|DI|U)\b|"
            r"^\s*GNS\s+=\s+GPU not supported",
            re.MULTILINE,
        ),
    ),
    (
        "nvidia-smi-topo-m.txt",
        re.compile(
            r"^\s*GPU0\s.*(CPU Affinity|NUMA Affinity|\bX\b)|"
            r"Option -m is missing its value",
            re.MULTILINE,
        ),
    ),
    # nvlink -s before -L: both name each GPU as "GPU 0: <name> (UUID: ...)".
    ("nvidia-smi-nvlink-s.txt", re.compile(r"^\s*Link \d+: (?:\d+(?:\.\d+)? GB/s|<inactive>)", re.MULTILINE)),
    ("lspci.txt", re.compile(r"^\s*LnkSta:\s", re.MULTILINE)),
    (
        "nvidia-smi.txt",
        re.compile(
            r"NVIDIA-SMI|Failed to initialize NVML|No devices were found|"
            r"couldn't communicate with the NVIDIA driver"
        ),
    ),
    ("nvidia-smi-L.txt", re.compile(r"^GPU \d+: .*\(UUID: ", re.MULTILINE)),
    ("ldconfig-p.txt", re.compile(r"libs found in cache|^\s+\S+\.so[.\d]* \(", re.MULTILINE)),
    ("os-release", re.compile(r"^(PRETTY_NAME|VERSION_ID)=", re.MULTILINE)),
)


def guess_source_name(text: str) -> str | None:
    head = text[:200_000]
    # First: a collect_env report quotes other tools' words (nvidia-smi's GPU names, a topology table),
    # and a TensorFlow log is recognised by its own log format and fixed messages.
    from gpudoctor.facts.collect_env import is_collect_env
    from gpudoctor.facts.tensorflow_log import is_tensorflow_log

    if is_collect_env(head):
        return "torch-collect-env.txt"
    if is_tensorflow_log(head):
        return "tensorflow-log.txt"
    for name, marker in _MARKERS:
        if marker.search(head):
            return name
    return None
