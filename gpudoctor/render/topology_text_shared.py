"""What the topology renderers share: which GPUs and NICs there are, what kind a path is, link texts.

The terminal text (``topology_text``) and the SVG picture (``topology_svg*``) both read the model through
these few helpers, so the two never disagree about what there is or how it is written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from gpudoctor.facts.topology_model import PATH_MEANING, MachineTopology, NvLinkState, PcieLink, nvlink_count

NO_TOPOLOGY = "no GPU topology known"


def clean(text: object) -> str:
    """One line of printable text: control and format characters (escape sequences, NULs, lone surrogates)
    dropped, whitespace runs made one space.  Names come from the driver and from pasted files; neither may
    steer the terminal or break a table."""
    if text is None:
        return ""
    kept = "".join(ch if not unicodedata.category(ch).startswith("C") else " " for ch in str(text))
    return " ".join(kept.split())


def gpu_indices(topo: MachineTopology) -> list[int]:
    """Every GPU the model mentions, sorted: a pair or a NIC link can name a GPU nobody described."""
    found = {gpu.index for gpu in topo.gpus}
    found.update(index for pair in topo.pairs for index in (pair.a, pair.b))
    found.update(gpu for gpu, _ in topo.nics_links)
    return sorted(index for index in found if isinstance(index, int) and not isinstance(index, bool))


def nic_labels(topo: MachineTopology) -> list[str]:
    """The NICs in the model's order, then any only the GPU→NIC links name."""
    labels = [nic.label for nic in topo.nics]
    extra = sorted({nic for _, nic in topo.nics_links if nic not in labels}, key=natural_key)
    return unique(labels + extra)


def path_kind(path: str | None) -> str | None:
    """ "NV#" for any NVLink path, the topo -m word for a known PCIe/CPU path, None for anything else."""
    if nvlink_count(path) is not None:
        return "NV#"
    word = (path or "").strip().upper()
    return word if word in PATH_MEANING and word not in ("X", "NV") else None


def form_factor_label(form_factor: str | None) -> str:
    """ "SXM" / "PCIe" as people write them; anything else as given."""
    text = clean(form_factor)
    return {"sxm": "SXM", "pcie": "PCIe"}.get(text.lower(), text)


def pcie_text(link: PcieLink | None) -> str | None:
    """ "Gen4 x16 (max Gen4 x16)"; None when nothing about the link is known."""
    if link is None or all(v is None for v in (link.gen_current, link.gen_max, link.width_current, link.width_max)):
        return None
    now = f"Gen{or_unknown(link.gen_current)} x{or_unknown(link.width_current)}"
    if link.gen_max is None and link.width_max is None:
        return now
    return f"{now} (max Gen{or_unknown(link.gen_max)} x{or_unknown(link.width_max)})"


def nvlink_text(state: NvLinkState | None) -> str | None:
    """ "18/18 active" or "16/18 active, down: 3, 7"; None when nobody reported NVLinks."""
    if state is None:
        return None
    if state.total == 0:
        return "none"
    text = f"{state.active}/{state.total} active"
    down = state.down
    return text + (", down: " + ", ".join(str(link) for link in down) if down else "")


# ---------------------------------------------------------------- small things


def or_unknown(value: object) -> str:
    return "?" if value is None else str(value)


def natural_key(label: str) -> tuple[tuple[int, int, str], ...]:
    # NIC2 before NIC10.
    # ASCII digits only: "²" is a digit to str.isdigit() but not to int().
    return tuple(
        (0, int(part), "") if part.isascii() and part.isdigit() else (1, 0, part)
        for part in re.split(r"([0-9]+)", str(label))
    )


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
