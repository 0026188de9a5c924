"""The versions and GPU names the evidence states, wherever they are written.

The structured parsers read the outputs they know; a paste also states facts in free text: a warning names
the GPU ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 ..."), ``pip list`` names the torch build, a
TensorFlow log names the device, an API-mismatch line names two driver versions.  :func:`stated_facts` merges
both: every distinct value, structured ones first.  It is what a report lists as "facts seen", so a
maintainer (and the accuracy benchmark) can tell what was read from what was not.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.text_search import LazyPattern, windowed_finditer

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

_V = r"(\d+(?:\.\d+)+)"  # a dotted version
_DRIVER_V = r"(\d{3}\.\d{1,3}(?:\.\d{1,3})?)"  # an NVIDIA driver version: 535.104.05, 470.57.02, 551.61
_NAME = r"((?:NVIDIA |Tesla |Quadro |GeForce |TITAN |RTX |GRID )?[A-Za-z][\w\-. /]*?)"

_GPU_NAME_PATTERNS = (
    LazyPattern(rf"^\s*GPU \d+: {_NAME}\s*(?:\(UUID:|$)", re.MULTILINE),  # nvidia-smi -L, collect_env
    LazyPattern(rf"\b{_NAME} with CUDA capability sm_\d+ is not compatible"),
    LazyPattern(rf"Found GPU\d+ {_NAME} which is of cuda capability"),
    LazyPattern(r"\bname: ([^,\n]+?), pci bus id"),  # TensorFlow "Created device ... (device: 0, name: X, pci bus id"
    LazyPattern(r"^\s*name: (.+?) major: \d+ minor: \d+", re.MULTILINE),  # TensorFlow 1.x / 2.0 device properties
    LazyPattern(r"^\s*Product Name\s*:\s*(.+?)\s*$", re.MULTILINE),  # nvidia-smi -q
    LazyPattern(r'^\s*Device \d+: "([^"\n]+)"', re.MULTILINE),  # deviceQuery
    LazyPattern(r"^\|\s+\d+\s+((?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b.*?)\s+(?:On|Off)\s+\|", re.MULTILINE),  # table
    LazyPattern(r"\bname: (.+?) computeCapability: \d"),  # TensorFlow 2.x "Found device 0 with properties"
    LazyPattern(r"NVRM: The NVIDIA (.+?) GPU installed in this system"),  # legacy-branch notice
    LazyPattern(r"\bdevice\s+\d+ \[0x[0-9a-fA-F]+\] (.+?)\s*$", re.MULTILINE),  # NCCL tests' rank lines
    LazyPattern(r"\bCUDA:\d+ \(([^,()]+), \d+ ?MiB\)"),  # Ultralytics "CUDA:0 (NVIDIA GeForce RTX 2060, 6144MiB)"
    LazyPattern(r"\bcuda:\d+ ((?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b[^:\n]*?)\s*:"),  # ComfyUI "Device: cuda:0 X :"
    LazyPattern(r"^GPU \d+\s{2,}(\S.*?)\s*$", re.MULTILINE),  # detectron2 / mmcv collect_env tables
    # Any NVIDIA product name in prose or other tools' output: the brand makes it a name, not a guess.
    LazyPattern(
        r"\b((?:NVIDIA )?(?:GeForce (?:RTX |GTX |GT |MX )?\d{3,4}(?: ?(?:Ti|SUPER|Laptop GPU|D))*"
        r"|Tesla [KPMVT]\d+\w*(?:-\w+)*|Quadro (?:RTX )?[A-Z]?\d{3,5}\w*|TITAN (?:RTX|Xp|X|V)"
        r"|NVIDIA (?:RTX )?(?:A|H|L|B)\d{1,3}[A-Za-z]*(?:-\w+)*))\b"
    ),
)
_DRIVER_PATTERNS = (
    LazyPattern(rf"Driver Version\s*:?\s*{_DRIVER_V}", re.IGNORECASE),  # nvidia-smi table and -q, collect_env
    LazyPattern(rf"Kernel Module(?: for \S+)?\s+{_DRIVER_V}"),  # /proc/driver/nvidia/version, NVRM loading line
    LazyPattern(rf"client has the version {_DRIVER_V}, but this kernel module has the version {_DRIVER_V}"),
    LazyPattern(rf"NVML library version:?\s*{_DRIVER_V}"),
    LazyPattern(rf"kernel reported version is:?\s*{_DRIVER_V}"),  # TensorFlow cuInit diagnostics
    LazyPattern(rf"DRIVER version:?\s*{_DRIVER_V}", re.IGNORECASE),
    LazyPattern(rf"dkms/nvidia(?:-open)?/{_DRIVER_V}/"),  # a DKMS build log path
    LazyPattern(rf"^\s*nvidia(?:-open)?[/,] ?{_DRIVER_V}[,:]", re.MULTILINE),  # dkms status
    LazyPattern(rf"The {_DRIVER_V} NVIDIA driver"),  # legacy-branch notice
)
_CUDA_DRIVER_PATTERNS = (
    LazyPattern(rf"CUDA Version\s*:?\s*{_V}"),  # nvidia-smi header and -q
    LazyPattern(rf"CUDA Driver Version / Runtime Version\s+{_V}"),  # deviceQuery
)
_CUDA_RUNTIME_PATTERNS = (
    LazyPattern(rf"CUDA runtime version\s*:?\s*{_V}", re.IGNORECASE),  # collect_env
    LazyPattern(rf"Cuda compilation tools, release {_V}"),  # nvcc
    LazyPattern(rf"CUDA Driver Version / Runtime Version\s+\d+(?:\.\d+)+ / {_V}"),  # deviceQuery
    # Issue templates: "CUDA/cuDNN version: 10.2.89", "### CUDA/cuDNN version" then "11.6/8.6".
    LazyPattern(rf"CUDA/cuDNN version[^\n:]{{0,20}}(?::|\n(?:[ \t]*\n){{0,3}})[ \t]*(?:CUDA[ :]*)?{_V}", re.I),
)
_TORCH_PATTERNS = (
    LazyPattern(r"PyTorch version\s*:?\s*(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?(?:\+[\w.]+)?)", re.IGNORECASE),
    LazyPattern(r"(?:^|[\s\[\]'\"])torch\s*==\s*(\d+\.\d+(?:\.\d+)?(?:[a-z0-9.]*)?(?:\+[\w.]+)?)", re.MULTILINE),
    LazyPattern(r"^\s*torch\s+(\d+\.\d+\.\d+(?:[a-z0-9.]*)?(?:\+[\w.]+)?)\s", re.MULTILINE),  # pip list / conda list
    LazyPattern(
        r"torch(?:\.__version__| version)\s*[:=]?\s*'?(\d+\.\d+\.\d+(?:[a-z0-9.]*)?(?:\+[\w.]+)?)", re.IGNORECASE
    ),
    LazyPattern(r"^PyTorch\s{2,}(\d+\.\d+\.\d+\S*)", re.MULTILINE),  # detectron2 / mmcv collect_env tables
    LazyPattern(r"\btorch-(\d+\.\d+\.\d+(?:\+[\w.]+)?)"),  # Ultralytics banner "torch-1.13.1+cu117"
)
_TORCH_CUDA_PATTERNS = (LazyPattern(rf"CUDA used to build PyTorch\s*:?\s*{_V}", re.IGNORECASE),)
_TENSORFLOW_PATTERNS = (
    LazyPattern(r"(?:^|[\s\[\]'\"])tensorflow(?:-gpu|-cpu|-intel|-macos)?\s*==\s*(\d+\.\d+(?:\.\d+)?)", re.MULTILINE),
    LazyPattern(r"^\s*tensorflow(?:-gpu|-cpu|-intel|-macos)?\s+(\d+\.\d+\.\d+)\s", re.MULTILINE),
    LazyPattern(r"Tensor ?Flow version[^:\n]{0,40}[:=]\s*v?(\d+\.\d+\.\d+)", re.IGNORECASE),  # issue template
    LazyPattern(r"\b(?:TF|TensorFlow) v?(\d+\.\d+\.\d+)\b"),
    LazyPattern(r"\b(?:tf|tensorflow)\.__version__[^\d\n]{0,30}(\d+\.\d+\.\d+(?:-dev\d+|rc\d+)?)"),
    LazyPattern(r"\btf_?version\s*[:=]\s*(\d+\.\d+\.\d+(?:-dev\d+|rc\d+)?)", re.IGNORECASE),
    # The issue template's heading with the answer under it ("### Tensorflow Version" then "2.11.0").
    LazyPattern(r"Tensor ?Flow Version[^\n]{0,40}\n(?:[ \t]*\n){0,3}[ \t]*(?:tf |v)?(\d+\.\d+(?:\.\d+)?)\b", re.I),
)
_CUDNN_PATTERNS = (
    LazyPattern(rf"cuDNN version\s*:?\s*{_V}", re.IGNORECASE),
    LazyPattern(rf"libcudnn(?:_\w+)?\.so\.{_V}"),
    LazyPattern(rf"Loaded runtime CuDNN library: {_V} but source was compiled with: {_V}", re.IGNORECASE),
)
_CUDNN_PACKED = LazyPattern(r"Loaded cuDNN version (\d{4,5})\b")


@dataclass(frozen=True)
class StatedFacts:
    """Every distinct value the evidence states, structured sources first."""

    gpu_names: tuple[str, ...] = ()
    driver_versions: tuple[str, ...] = ()
    cuda_driver_versions: tuple[str, ...] = ()  # the newest CUDA the driver runs ("CUDA Version" of nvidia-smi)
    cuda_runtime_versions: tuple[str, ...] = ()  # toolkits / runtimes (nvcc, collect_env's "CUDA runtime version")
    torch_versions: tuple[str, ...] = ()
    torch_cuda_versions: tuple[str, ...] = ()
    tensorflow_versions: tuple[str, ...] = ()
    cudnn_versions: tuple[str, ...] = ()


@functools.lru_cache(maxsize=None)
def _needles(pattern: LazyPattern) -> tuple[str, ...]:
    from gpudoctor.kb.signatures import literal_needles

    return literal_needles(pattern.pattern)


def _found(patterns: tuple[LazyPattern, ...], texts: list[str]) -> list[str]:
    values: list[str] = []
    for text in texts:
        lower = text.lower()
        for pattern in patterns:
            needles = _needles(pattern)
            if needles and not any(needle in lower for needle in needles):
                continue  # a cheap test first: most patterns' words are not in most texts
            for match in windowed_finditer(pattern.compiled, text, lower, needles):
                values.extend(group.strip() for group in match.groups() if group)
    return values


def _distinct(*groups: object) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for group in groups:
        values = group if isinstance(group, (list, tuple)) else [group]
        for value in values:
            if isinstance(value, str) and value.strip():
                text = " ".join(value.split())
                seen.setdefault(text.lower(), text)
    return tuple(seen.values())


def _packed_cudnn(texts: list[str]) -> list[str]:
    """ "Loaded cuDNN version 8902" -> "8.9.2"; 90100 -> "9.1.0"."""
    versions = []
    for text in texts:
        for match in _CUDNN_PACKED.compiled().finditer(text):
            number = int(match.group(1))
            versions.append(
                f"{number // 10000}.{number // 100 % 100}.{number % 100}"
                if number >= 10000
                else f"{number // 1000}.{number // 100 % 10}.{number % 100}"
            )
    return versions


def _texts(facts: Facts) -> list[str]:
    texts = []
    for key in (
        Ev.PASTE,
        Ev.NVIDIA_SMI,
        Ev.NVIDIA_SMI_LIST,
        Ev.TORCH_COLLECT_ENV,
        Ev.TENSORFLOW_LOG,
        Ev.KERNEL_LOG,
        Ev.PROC_DRIVER_VERSION,
        Ev.NVCC,
    ):
        item = facts.evidence.get(key.value)
        if item is not None and item.text and (key is Ev.PASTE or item.kind != "paste-section"):
            texts.append(item.text)
    return texts


def stated_facts(facts: Facts) -> StatedFacts:
    """What the evidence says, structured sources first, then what free text states."""
    texts = _texts(facts)
    torch, tf, driver = facts.torch, facts.tensorflow, facts.driver
    collect_env = facts.collect_env
    torch_versions = _distinct(torch.version, _found(_TORCH_PATTERNS, texts))
    tags = [re.fullmatch(r".*\+cu(\d+)(\d)", v) for v in torch_versions]
    tag_cuda = [f"{m.group(1)}.{m.group(2)}" for m in tags if m]
    return StatedFacts(
        gpu_names=_distinct(
            [g.name for g in facts.gpus if g.name],
            collect_env.gpu_names if collect_env else (),
            _found(_GPU_NAME_PATTERNS, texts),
        ),
        driver_versions=_distinct(driver.kernel_version, driver.userspace_version, _found(_DRIVER_PATTERNS, texts)),
        cuda_driver_versions=_distinct(
            driver.cuda_max, _found(_CUDA_DRIVER_PATTERNS, texts), facts.pasted_containers.driver_cuda
        ),
        cuda_runtime_versions=_distinct(
            collect_env.cuda_runtime if collect_env else None,
            facts.nvcc.release if facts.nvcc else None,
            [t.version for t in facts.toolkits if t.version],
            _found(_CUDA_RUNTIME_PATTERNS, texts),
        ),
        torch_versions=torch_versions,
        torch_cuda_versions=_distinct(torch.cuda, _found(_TORCH_CUDA_PATTERNS, texts), tag_cuda),
        tensorflow_versions=_distinct(tf.version, _found(_TENSORFLOW_PATTERNS, texts)),
        cudnn_versions=_distinct(
            torch.cudnn,
            _found(_CUDNN_PATTERNS, texts),
            _packed_cudnn(texts),
        ),
    )
