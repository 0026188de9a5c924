"""The GPU interconnect a cloud instance type has, against the links its GPUs show (PLAT003).

The knowledge base says what links a type's GPUs (``gpudoctor.kb.cloud_instances``: "NVSwitch", "NVLink peer to
peer", "NVLink (all to all)"); the merged topology (``facts.machine_topology``: ``nvidia-smi topo -m``, NVML,
``nvidia-smi nvlink -s``) says what this machine's GPUs use.  Why links are down is the TOPO checks' to say
(TOPO003 the links, TOPO004 the fabric manager); this check says that the type should have them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.platform_model import CloudInstance
from gpudoctor.facts.topology_model import GpuPair, NvLinkState, nvlink_count
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks import _topology as t
from gpudoctor_checks.platform import expected_instance, stop_start_fix, type_words

if TYPE_CHECKING:
    from gpudoctor.kb.cloud_instances import InstanceType

_EVIDENCE = (Ev.PLATFORM, Ev.NVIDIA_SMI_TOPO, Ev.NVIDIA_SMI_NVLINK, Ev.NVML)
_TOPO_M = "`nvidia-smi topo -m` shows how each GPU pair is linked"
_NVLINK_S = "`nvidia-smi nvlink -s` whether each NVLink is up"
# Words of the kb's interconnect that say every GPU pair is joined by NVLink.  Other NVLink types (AWS P3's
# V100s: a hybrid cube mesh) link some pairs only, so a pair over PCIe there is the design, not a fault.
_EVERY_PAIR = re.compile(r"nvswitch|all[ -]to[ -]all", re.IGNORECASE)
_SWITCH = re.compile(r"nvswitch", re.IGNORECASE)


def links_every_pair(interconnect: str | None) -> bool:
    """Whether the kb's interconnect words say every GPU pair is joined by NVLink (NVSwitch, "all to all")."""
    return bool(interconnect and _EVERY_PAIR.search(interconnect))


def _short(interconnect: str) -> str:
    """ "NVSwitch (NVIDIA GPUDirect RDMA across instances)" -> "NVSwitch": the link, without the aside."""
    return interconnect.split(" (", 1)[0].strip() or interconnect


@dataclass(frozen=True)
class _Shown:
    """What this machine's GPUs show: the pairs with a known path, each GPU's NVLink state, the GPUs seen."""

    pairs: tuple[GpuPair, ...]
    states: dict[int, NvLinkState]
    gpus: tuple[int, ...]


def _shown(facts: Facts) -> _Shown:
    topo = facts.machine_topology
    states = {gpu.index: gpu.nvlink for gpu in topo.gpus if gpu.nvlink is not None}
    if not states and not topo.gpus:
        # `nvidia-smi nvlink -s` alone (no GPU list, no matrix): its own numbering is all there is.
        states = dict(facts.nvlink_status)
    # A state that lists no link and says nothing of support (`nvlink -c` of nothing) tells nothing.
    states = {index: state for index, state in states.items() if state.total or state.supported is not None}
    pairs = tuple(pair for pair in topo.pairs if pair.path)
    gpus = tuple(sorted({gpu.index for gpu in topo.gpus} | set(states)))
    return _Shown(pairs, states, gpus)


def _down(states: dict[int, NvLinkState]) -> tuple[dict[int, list[int]], list[int]]:
    """(each GPU's links reported down, the GPUs with NVLinks none of which is up or that report none)."""
    down = {index: state.down for index, state in sorted(states.items()) if state.down}
    none_up = [
        index
        for index, state in sorted(states.items())
        if index not in down and (state.supported is False or (state.supported and not state.active))
    ]
    return down, none_up


def _no_peer(shown: _Shown) -> list[int]:
    """GPUs whose every known pair is over PCIe: they reach no other GPU over NVLink."""
    lonely = []
    for index in shown.gpus:
        mine = [pair for pair in shown.pairs if index in (pair.a, pair.b)]
        if mine and not any(nvlink_count(pair.path) for pair in mine):
            lonely.append(index)
    return lonely


def _pairs_words(pairs: list[GpuPair]) -> str:
    """ "GPU0↔GPU3, GPU1↔GPU2 (SYS); GPU4↔GPU5 (NODE)": the pairs grouped by the path they take."""
    by_path: dict[str, list[GpuPair]] = {}
    for pair in pairs:
        by_path.setdefault(pair.path or "?", []).append(pair)
    return "; ".join(f"{t.pair_list(group)} ({path})" for path, group in by_path.items())


def _down_words(down: dict[int, list[int]], none_up: list[int], states: dict[int, NvLinkState]) -> list[str]:
    words = [
        f"GPU {index}: NVLink {', '.join(map(str, links))} down ({states[index].active} of {states[index].total} up)"
        for index, links in down.items()
    ]
    for index in none_up:
        no_link = states[index].supported is False
        words.append(f"GPU {index}: {'reports no NVLink' if no_link else 'no NVLink up'}")
    return words


def _fix(facts: Facts, cloud: CloudInstance, switched: bool) -> Fix:
    """On NVSwitch types the fabric manager first (unless it is known to run), then the host; else the host."""
    host = stop_start_fix(
        cloud,
        "An NVLink the instance type has that stays down" + (" with the fabric manager running" if switched else ""),
        still="the links are still down",
    )
    topo = facts.machine_topology
    unfinished = any(state not in ("completed", "not_supported") for state in topo.fabric_states.values())
    if not switched or (topo.fabric_manager == "active" and not unfinished):
        return host
    fabric = t.fabric_manager_fix(facts)
    return Fix(f"{fabric.summary} {host.summary}", fabric.commands, fabric.needs_root, fabric.url)


def _not_judged(facts: Facts) -> Outcome | tuple[CloudInstance, InstanceType, str]:
    """The n/a outcome when there is nothing to judge; else (the instance, its kb row, its interconnect)."""
    from gpudoctor.kb.cloud_instances import nvlink_expected

    cloud = facts.platform.cloud
    if cloud is None:
        return not_applicable("not a cloud instance gpudoctor recognises")
    if not cloud.instance_type:
        return not_applicable(f"{cloud.provider_name}: the instance type is not known")
    words = type_words(cloud)
    row = expected_instance(facts)
    if row is None or row.gpu_count <= 0:
        return not_applicable(f"{words}: no GPUs known for this type (`gpudoctor kb instances`)")
    if row.whole_gpus < 2:
        return not_applicable(f"{words} has {row.expected}: no GPU pair to link")
    expected = nvlink_expected(row)
    if expected is None or row.gpu_interconnect is None:
        return not_applicable(
            f"{words} has {row.expected}; its provider's page, as the knowledge base records it, states no GPU "
            "interconnect (which is not the same as PCIe only): nothing to judge the links against"
        )
    if not expected:
        return not_applicable(f"{words}'s GPUs are linked by {row.gpu_interconnect}, not NVLink: not judged here")
    return cloud, row, row.gpu_interconnect


@check("PLAT003", area="platform", title="Interconnect the instance type has")
def instance_interconnect(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a cloud instance type whose GPUs the provider links by NVLink or NVSwitch
    (`gpudoctor kb instances TYPE`), how the visible GPUs reach each other (`nvidia-smi topo -m`, NVML) and
    whether their NVLinks are up (NVML, `nvidia-smi nvlink -s`). Where the type links every pair (NVSwitch,
    "all to all"), every pair must show NV#; where it links some pairs only (AWS P3's V100s), every GPU must
    reach at least one other over NVLink.

    Why it matters: the type is sold, and priced, for its NVLink fabric. GPUs that reach each other over PCIe
    (SYS, NODE, PHB, PXB, PIX) instead run all-reduce several times slower, with no error anywhere.

    How to fix: on NVSwitch types, the fabric manager of the driver's exact version must run (TOPO004 says
    whether it does); TOPO003 names the links that are down. Links that stay down are the host's fault: stop
    and start the instance (a reboot keeps the same host) and report it to the provider if they are still down.
    """
    judged = _not_judged(facts)
    if isinstance(judged, Outcome):
        return judged
    cloud, row, interconnect = judged
    words, short = type_words(cloud), _short(interconnect)
    shown = _shown(facts)
    if not shown.pairs and not shown.states:
        return not_applicable(
            f"{words}'s GPUs should be linked by {short}; how they are is not known: {_TOPO_M}, {_NVLINK_S}"
        )
    if len(shown.gpus) < 2 and not shown.pairs:
        return not_applicable(f"{words}: one GPU visible, no pair to judge (PLAT002 judges the count)")
    every = links_every_pair(interconnect)
    over_pcie = [pair for pair in shown.pairs if nvlink_count(pair.path) is None]
    lonely = [] if every else _no_peer(shown)
    down, none_up = _down(shown.states)
    data: dict[str, Any] = {
        "instance_type": cloud.instance_type,
        "expected_interconnect": interconnect,
        "every_pair_expected": every,
        "pairs_judged": len(shown.pairs),
        "pairs_over_pcie": [{"a": p.a, "b": p.b, "path": p.path} for p in over_pcie],
        "gpus_without_nvlink_peer": lonely,
        "links_down": {str(index): links for index, links in down.items()},
        "gpus_without_links_up": none_up,
    }
    faults: list[str] = []
    if every and over_pcie:
        faults.append(f"{counted(len(over_pcie), 'GPU pair')} over PCIe only: {_pairs_words(over_pcie)}")
    if lonely:
        theirs = sorted({p.path or "?" for p in over_pcie if p.a in lonely or p.b in lonely})
        faults.append(
            f"{'GPU' if len(lonely) == 1 else 'GPUs'} {', '.join(map(str, lonely))} "
            f"{'reaches' if len(lonely) == 1 else 'reach'} no other GPU over NVLink, only over PCIe "
            f"({', '.join(theirs)})"
        )
    faults += _down_words(down, none_up, shown.states)
    switched = bool(_SWITCH.search(interconnect))
    if faults:
        why = "TOPO003 says which NVLinks are down" + (
            ", TOPO004 says whether the fabric manager runs" if switched else ""
        )
        message = f"{words}'s {row.expected} are linked by {short}; " + "; ".join(faults) + f" ({why})"
        finding = Finding(Severity.PROBLEM, message, _fix(facts, cloud, switched), _EVIDENCE)
        return Outcome(message, [finding], data)
    return ok(_ok_words(words, short, shown, every, over_pcie), data)


def _ok_words(words: str, short: str, shown: _Shown, every: bool, over_pcie: list[GpuPair]) -> str:
    paths = ", ".join(sorted({p.path for p in shown.pairs if p.path and nvlink_count(p.path)}))
    if not shown.pairs:
        linked = f"how each GPU pair is linked was not collected ({_TOPO_M})"
    elif every:
        linked = f"{counted(len(shown.pairs), 'GPU pair')} linked by NVLink ({paths}), as the type's {short} provides"
    else:
        linked = (
            f"each of {counted(len(shown.gpus), 'GPU')} reaches another over NVLink ({paths}), as the type's {short} "
            "provides"
            + (
                f"; {counted(len(over_pcie), 'pair')} over PCIe, which it need not join (it does not link every pair)"
                if over_pcie
                else ""
            )
        )
    if shown.states:
        active = sum(state.active for state in shown.states.values())
        total = sum(state.total for state in shown.states.values())
        state_words = f"{active} of {total} NVLinks up"
    else:
        state_words = f"the state of each link was not collected ({_NVLINK_S})"
    return f"{words}: {linked}; {state_words}"
