"""The PyTorch smoke's distributed part, the parent's side: plan it, start the ranks, fold their reports.

Runs inside the target Python (standard library only: torch runs in the ranks, ``_smoke_torch_rank.py``).
One process per rank (the smoke script itself with ``--rank``), rendezvous over TCP on 127.0.0.1 at a free port; NCCL with one rank per GPU when
there are 2+ GPUs, else gloo with 2 CPU processes.  busbw is nccl-tests' all-reduce bus bandwidth,
algbw × 2(n−1)/n, from the slowest rank's time per repeat.  The rank processes die with the probe.

The all-reduce record adds ``ddp_loss_first``, ``ddp_loss_last`` and ``ddp_steps`` to the contract.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import IO, TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or __package__:
    from . import _smoke_helpers as helpers
    from . import protocol
else:
    import _smoke_helpers as helpers
    import protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._smoke_torch_device import Device

CHILD_KILL_GRACE_S = 1.0


def distributed_plan(
    devices: Sequence[Device], select: str, nccl_available: bool
) -> tuple[str | None, int, str | None, str | None]:
    """(backend, world size, device kind, None) for the all-reduce, or (None, 0, None, why skipped)."""
    gpus = [d for d in devices if d.accelerator]
    if len(gpus) >= 2 and nccl_available:
        return "nccl", len(gpus), "cuda", None
    if select == "cuda":
        if len(gpus) >= 2:
            return None, 0, None, "NCCL is not available in this torch build"
        return None, 0, None, "needs 2+ GPUs (found %d); --devices cpu/all tests gloo on the CPU" % len(gpus)
    return "gloo", 2, "cpu", None


class RankProcesses:
    """The rank processes of the distributed part, so that whatever happens none outlives the probe."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.files: list[IO[bytes]] = []

    def start(self, argv_for_rank: Callable[[int], list[str]], world: int, env: dict[str, str]) -> None:
        for rank in range(world):
            err = tempfile.TemporaryFile()  # noqa: SIM115 - the file outlives this block on purpose
            self.files.append(err)
            # Rank 0 reports on stdout; the others' stdout would only carry stray prints.
            stdout = subprocess.PIPE if rank == 0 else subprocess.DEVNULL
            self.procs.append(
                subprocess.Popen(argv_for_rank(rank), stdin=subprocess.DEVNULL, stdout=stdout, stderr=err, env=env)
            )

    def wait(self, hard_stop: float) -> str:
        """Until every rank exited, one failed (others then get a moment), or the host clock passes ``hard_stop``."""
        failed_at = None
        while True:
            codes = [proc.poll() for proc in self.procs]
            if all(code is not None for code in codes):
                return "done"
            now = time.perf_counter()
            if any(code not in (None, 0) for code in codes):
                failed_at = failed_at or now
                if now - failed_at > 2.0:
                    return "failed"
            if now >= hard_stop:
                return "timeout"
            time.sleep(0.05)

    def kill(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    proc.terminate()
                except OSError:
                    pass
        ends = time.perf_counter() + CHILD_KILL_GRACE_S
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.01, ends - time.perf_counter()))
            except subprocess.TimeoutExpired:
                try:
                    proc.kill()
                    proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass

    def rank0_lines(self) -> list[dict[str, Any]]:
        if not self.procs or self.procs[0].stdout is None:
            return []
        try:
            data = self.procs[0].stdout.read() if self.procs[0].poll() is not None else b""
        except (OSError, ValueError):
            return []
        lines = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                lines.append(value)
        return lines

    def stderr_tail(self, lines: int = 8) -> str:
        tails = []
        for rank, handle in enumerate(self.files):
            try:
                handle.seek(0)
                text = handle.read().decode("utf-8", "replace")
            except (OSError, ValueError):
                continue
            last = [line for line in text.splitlines() if line.strip()][-lines:]
            if last:
                tails.append("rank %d: %s" % (rank, " | ".join(last)))
        return "; ".join(tails)

    def close(self) -> None:
        self.kill()
        for proc in self.procs:
            if proc.stdout is not None:
                try:
                    proc.stdout.close()
                except OSError:
                    pass
        for handle in self.files:
            try:
                handle.close()
            except OSError:
                pass


def run_allreduce(
    script: str,
    params: dict[str, Any],
    devices: Sequence[Device],
    ranks: RankProcesses,
    record: dict[str, Any],
    backend: str,
    world: int,
    stop_at: float,
) -> None:
    """Start ``world`` ranks of ``script`` and fold rank 0's reports into ``record``; ``ranks`` keeps them."""
    nbytes = params["ar_bytes"]["gpu" if backend == "nccl" else "cpu"]
    if backend == "nccl":
        free = [d.free_bytes() for d in devices if d.accelerator]
        known = [b for b in free if b is not None]
        nbytes = helpers.choose_bytes(nbytes, min(known) if known and len(known) == len(free) else None, buffers=2)
        if nbytes is None:
            record["skipped"] = "not enough free device memory"
            return
    port = helpers.free_port()
    deadline_epoch = time.time() + (stop_at - time.perf_counter())
    threads = max(1, (helpers.cpu_threads() or 1) // world) if backend == "gloo" else 0

    def argv(rank: int) -> list[str]:
        return [
            sys.executable,
            script,
            "--rank",
            str(rank),
            "--world-size",
            str(world),
            "--port",
            str(port),
            "--backend",
            backend,
            "--bytes",
            str(nbytes),
            "--repeats",
            str(params["ar_repeats"]),
            "--steps",
            str(params["ddp_steps"]),
            "--batch",
            str(params["cnn_batch"]),
            "--deadline",
            "%.3f" % deadline_epoch,
            "--threads",
            str(threads),
        ]

    env = dict(os.environ)
    env.pop(protocol.CAPTURE_FILE_ENV, None)
    if backend == "gloo" and sys.platform.startswith("linux"):
        # All ranks are on this host: loopback, whatever the host name resolves to (in containers it often
        # resolves to an address gloo cannot connect through).  A user's own setting wins.
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    record.update(bytes=nbytes)
    try:
        ranks.start(argv, world, env)
        outcome = ranks.wait(stop_at)
        if outcome != "done":
            ranks.kill()
        _fold_rank_reports(record, ranks.rank0_lines(), world)
        if outcome == "timeout" and record.get("seconds") is None:
            record["skipped"] = "budget: the %d rank processes did not finish in the time left" % world
        elif record.get("error") is None and (outcome == "failed" or record.get("seconds") is None):
            codes = [proc.returncode for proc in ranks.procs]
            record["error"] = "rank processes ended with exit codes %s: %s" % (
                codes,
                ranks.stderr_tail() or "no output",
            )
        elif outcome == "timeout" and record.get("ddp_step_s") is None and record.get("error") is None:
            record["error"] = "the DDP step did not finish in the time left (all-reduce measured)"
    finally:
        ranks.close()


def _fold_rank_reports(record: dict[str, Any], reports: list[dict[str, Any]], world: int) -> None:
    for report in reports:
        phase = report.get("phase")
        if phase == "error" and not record.get("error"):
            record["error"] = report.get("error")
        elif phase == "allreduce":
            seconds = report.get("seconds")
            record.update(repeats=report.get("repeats"), seconds=seconds)
            if seconds:
                algbw = record["bytes"] / seconds / 1e9
                record.update(algbw_gbps=algbw, busbw_gbps=helpers.busbw(algbw, world))
            if report.get("wrong"):
                record["error"] = report["wrong"]
        elif phase == "ddp":
            record.update(
                ddp_step_s=report.get("step_s"),
                ddp_loss_decreased=report.get("loss_decreased"),
                ddp_loss_first=report.get("loss_first"),
                ddp_loss_last=report.get("loss_last"),
                ddp_steps=report.get("steps"),
            )
