"""Google TPUs: chips on the bus, device nodes, libtpu, the one-process lock, JAX's view."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome, judged
from gpudoctor.words import counted
from gpudoctor_checks._frameworks import pip

if TYPE_CHECKING:
    from gpudoctor.facts.tpu_model import TpuFacts

_JAX_TPU_URL = "https://github.com/jax-ml/jax"
_LOCK_URL = "https://github.com/jax-ml/jax/issues/10192"
_NO_TPU = "no TPU on the bus, no TPU device node, nothing about a TPU in the evidence"


def _install_fix(facts: Facts) -> Fix:
    return Fix(
        "Install JAX with its TPU runtime (the libtpu wheel) in the Python that runs the program.",
        (f'{pip(facts.jax.python)} install -U "jax[tpu]"',),
        url=_JAX_TPU_URL,
    )


def _node(tpu: TpuFacts) -> str:
    return tpu.accel_nodes[0] if tpu.accel_nodes else "/dev/accel0"


def _holder_fix(tpu: TpuFacts) -> Fix:
    commands = [f"sudo lsof -w {_node(tpu)}"]
    if tpu.in_use_by_pid is not None:
        commands.insert(0, f"ps -o pid,user,etime,args -p {tpu.in_use_by_pid}")
    return Fix(
        "Find the process that holds the TPU and end it, or wait for it: one process owns the TPU at a time.",
        tuple(commands),
        needs_root=True,
        url=_LOCK_URL,
    )


def _stale_lock_fix(tpu: TpuFacts) -> Fix:
    return Fix(
        "When no process holds the TPU (lsof lists none), delete the lock file a crashed process left behind.",
        (f"sudo lsof -w {_node(tpu)}", "sudo rm /tmp/libtpu_lockfile   # only when lsof listed no process"),
        needs_root=True,
        url=_LOCK_URL,
    )


def _busy(tpu: TpuFacts) -> bool:
    return tpu.in_use_reported or tpu.device_open_error is not None


def _chips_words(tpu: TpuFacts) -> str:
    generations = sorted({c.generation for c in tpu.chips if c.generation and c.generation != "testing only"})
    kind = f" ({', '.join(generations)})" if generations else ""
    return f"{counted(len(tpu.chips), 'TPU chip')}{kind}"


@check("TPU001", area="tpu", title="JAX sees the TPU chips", vendor="google")
def jax_sees_tpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the TPU chips on the PCI bus (Google's vendor id 1ae0 with a TPU device id) or their
    device nodes (`/dev/accelN` on v2-v4, `/dev/vfio/N` on v5e and later), against what JAX lists
    (`jax.devices()`: the probe's, or a pasted listing): TPU devices, or only the CPU.

    Why it matters: when JAX cannot start its TPU backend it falls back to the CPU with only a warning, and
    the program runs orders of magnitude slower on a machine that has TPUs.

    How to fix: when another process holds the TPU, end it (TPU003); otherwise install JAX's TPU runtime,
    `pip install -U "jax[tpu]"` (TPU002). A v5e/v6e VM created from an image made for another generation
    shows its chips unbound: recreate it with the generation's own image.
    """
    tpu = facts.tpu
    from gpudoctor.facts.tpu import tpu_evidence

    if not tpu_evidence(tpu):
        return not_applicable(_NO_TPU)
    data: dict[str, object] = {
        "chips": len(tpu.chips),
        "jax_backend": tpu.jax_backend,
        "jax_tpu_devices": len(tpu.devices or ()),
    }
    if tpu.devices:
        from gpudoctor.facts.tpu import chips_seen_by_jax

        spans = chips_seen_by_jax(tpu.devices)
        hosts = len({d.process_index for d in tpu.devices if d.process_index is not None})
        across = f" on {counted(hosts, 'host')}" if hosts > 1 else ""
        seen = f"JAX lists {counted(len(tpu.devices), 'TPU device')} ({counted(spans, 'chip')}{across})"
        if hosts <= 1 and tpu.chips and spans < len(tpu.chips):
            # One host: every chip on its bus should be among JAX's. TPU_VISIBLE_DEVICES is how a process is
            # given fewer on purpose (https://github.com/jax-ml/jax/issues/13043).
            limit = facts.env.get("TPU_VISIBLE_DEVICES")
            why = f" (TPU_VISIBLE_DEVICES={limit})" if limit else ""
            message = f"{seen}, of the {_chips_words(tpu)} on this machine{why}"
            return judged([Finding(Severity.WARNING, message, None, (Ev.FRAMEWORK_JAX, Ev.PCI_DEVICES))], data, message)
        return ok(seen, data=data)
    have = _chips_words(tpu) if tpu.chips else None
    if tpu.jax_backend is not None and tpu.jax_backend != "tpu":
        where = f"{have} on this machine" if have else "a TPU was expected"
        message = f"JAX runs on the {tpu.jax_backend.upper()}, not the TPU ({where})"
        fix = _holder_fix(tpu) if _busy(tpu) else _install_fix(facts)
        cause = "tpu-held-by-other-process" if _busy(tpu) else "libtpu-not-installed"
        evidence = (Ev.FRAMEWORK_JAX, Ev.PASTE, Ev.PCI_DEVICES)
        return judged([Finding(Severity.PROBLEM, message, fix, evidence, cause=cause)], data, message)
    if have:
        nodes = tpu.accel_nodes or tpu.vfio_nodes
        node_words = f", nodes {', '.join(nodes)}" if nodes else ""
        return ok(f"{have} on the bus{node_words}; JAX not probed", data=data)
    return not_applicable("no TPU chip on the bus and no jax.devices() listing", data)


@check("TPU002", area="tpu", title="libtpu installed", vendor="google")
def libtpu_installed(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a TPU machine, the Python that runs JAX has the `libtpu` wheel (formerly
    `libtpu-nightly`), the TPU runtime JAX loads.

    Why it matters: without libtpu JAX has no TPU backend and silently uses the CPU. Beware JAX's own
    warning "either a TPU-enabled jaxlib or libtpu is not installed": it prints the same words when libtpu is
    installed but another process holds the TPU (TPU003).

    How to fix: `pip install -U "jax[tpu]"` in that Python (JAX's install instructions); PyTorch/XLA users
    install `torch_xla[tpu]` instead.
    """
    tpu = facts.tpu
    from gpudoctor.facts.tpu import tpu_evidence

    if not tpu_evidence(tpu):
        return not_applicable(_NO_TPU)
    status = facts.jax.run.status
    data = {"libtpu": tpu.libtpu_version, "jax": facts.jax.version, "jax_probe": status}
    if tpu.libtpu_version or tpu.libtpu_installed:
        return ok(f"libtpu {tpu.libtpu_version or '(version unknown)'} installed", data=data)
    if status == "not_installed" and tpu.chips:
        message = f"JAX is not installed in this Python ({_chips_words(tpu)} on the bus)"
        finding = Finding(Severity.WARNING, message, _install_fix(facts), (Ev.FRAMEWORK_JAX,))
        return judged([finding], data, message)
    if tpu.libtpu_installed is False:
        message = "libtpu is not installed: JAX has no TPU backend"
        finding = Finding(
            Severity.PROBLEM, message, _install_fix(facts), (Ev.FRAMEWORK_JAX,), cause="libtpu-not-installed"
        )
        return judged([finding], data, message)
    return not_applicable("whether libtpu is installed is not known (JAX not probed)", data)


def _lock_words(tpu: TpuFacts) -> str:
    owner = f", owner uid {tpu.lockfile_uid}" if tpu.lockfile_uid is not None else ""
    if tpu.lockfile_mtime is None:
        return f"{tpu.lockfile}{owner}"
    minutes = max(0, int((time.time() - tpu.lockfile_mtime) // 60))
    return f"{tpu.lockfile} ({counted(minutes, 'minute')} old{owner})"


@check("TPU003", area="tpu", title="TPU free for this process", vendor="google")
def tpu_not_held(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether another process holds the TPU: "The TPU is already in use by process with pid
    N" or "libtpu.so already in use by another process" in a log, `Couldn't open device: /dev/accel0
    (Operation not permitted)` from PyTorch/XLA, and the libtpu lock file `/tmp/libtpu_lockfile` with the
    processes holding it.

    Why it matters: libtpu lets one process own the TPU. A second process falls back to the CPU, and JAX then
    wrongly says libtpu is not installed. A process that crashed can leave the lock file behind, and every
    later start is refused until it is deleted.

    How to fix: find the holder with `sudo lsof -w /dev/accel0` and end it (or wait); when no process holds
    it, delete the stale lock file: `sudo rm /tmp/libtpu_lockfile`.
    """
    tpu = facts.tpu
    from gpudoctor.facts.tpu import tpu_evidence

    if not tpu_evidence(tpu):
        return not_applicable(_NO_TPU)
    data = {
        "in_use_by_pid": tpu.in_use_by_pid,
        "lockfile": tpu.lockfile,
        "holders": list(tpu.lock_holders),
        "device_open_error": tpu.device_open_error,
    }
    findings: list[Finding] = []
    misleading = (
        " (JAX's warning that libtpu is not installed is misleading here)" if tpu.misleading_libtpu_warning else ""
    )
    if tpu.in_use_by_pid is not None:
        message = f"the TPU is held by process {tpu.in_use_by_pid}: this one fell back to the CPU{misleading}"
        findings.append(
            Finding(Severity.PROBLEM, message, _holder_fix(tpu), (Ev.PASTE,), cause="tpu-held-by-other-process")
        )
    elif tpu.in_use_reported:
        message = f"libtpu is already in use by another process (or a stale lock file){misleading}"
        findings.append(
            Finding(
                Severity.PROBLEM,
                message,
                _stale_lock_fix(tpu),
                (Ev.PASTE,),
                cause="tpu-held-by-other-process",
                other_causes=("libtpu-stale-lockfile",),
            )
        )
    if tpu.device_open_error:
        message = f"the TPU device could not be opened: {tpu.device_open_error}; a process still holds it"
        findings.append(
            Finding(Severity.PROBLEM, message, _holder_fix(tpu), (Ev.PASTE,), cause="tpu-held-by-other-process")
        )
    if tpu.lockfile:
        findings.append(_lockfile_finding(tpu))
    return judged(findings, data, "no process holds the TPU" if tpu.runtime_collected else "nothing says it is held")


def _lockfile_finding(tpu: TpuFacts) -> Finding:
    evidence = (Ev.TPU_RUNTIME,)
    if tpu.lock_holders:
        pids = ", ".join(str(p) for p in tpu.lock_holders)
        return Finding(Severity.INFO, f"{_lock_words(tpu)} is held by process {pids}", None, evidence)
    if _busy(tpu) or tpu.jax_backend not in (None, "tpu"):
        return Finding(
            Severity.PROBLEM,
            f"{_lock_words(tpu)} exists and the TPU was refused: a stale lock file if no process holds it",
            _stale_lock_fix(tpu),
            evidence,
            cause="libtpu-stale-lockfile",
        )
    return Finding(
        Severity.INFO,
        f"{_lock_words(tpu)} exists: harmless while a TPU program runs, stale if none does",
        _stale_lock_fix(tpu),
        evidence,
    )
