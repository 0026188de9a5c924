"""Small helpers the PyTorch checks share: how a torch build is named, when a check has nothing to judge, the GPU
names of some compute capabilities, an error on one line."""

from __future__ import annotations

from gpudoctor.api import not_applicable
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import TorchFacts
from gpudoctor.results import Outcome


def describe_torch(torch: TorchFacts) -> str:
    if torch.cuda:
        build = f"CUDA {torch.cuda} build"
    elif torch.hip:
        build = f"ROCm (HIP {torch.hip}) build"
    elif torch.xpu_built:
        build = "Intel XPU build"
    elif torch.cpu_only:
        build = "CPU-only build"
    else:
        build = "build unknown"
    return f"torch {torch.version} ({build})"


def skip_unless_imported(torch: TorchFacts, cuda_build: bool = False) -> Outcome | None:
    """Not applicable unless torch imported (or a report describes it), and, with ``cuda_build``, is a CUDA build."""
    if not (torch.run.status in ("ok", "from_report") and torch.version):
        return not_applicable("PyTorch not available to judge (see TORCH001)", {"status": torch.run.status})
    if cuda_build and not torch.cuda:
        return not_applicable("not a CUDA build of PyTorch")
    return None


def gpu_names_for(facts: Facts, torch: TorchFacts, ccs: list[str]) -> str:
    names = {d.name for d in torch.devices if d.compute_capability in ccs and d.name}
    names |= {g.name for g in facts.gpus if g.compute_capability in ccs and g.name}
    if torch.unsupported_gpu and torch.unsupported_capability in ccs:
        names.add(torch.unsupported_gpu)
    return ", ".join(sorted(names)) or "this GPU"


def one_line(text: str) -> str:
    return " ".join(text.split())[:400]
