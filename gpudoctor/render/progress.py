"""Progress of long work (the smoke workloads) on stderr: a rich bar on a terminal, nothing otherwise.

Quiet when stderr is not a TTY, in JSON mode, or with ``NO_COLOR``-style plain output requested
by the caller: CI logs and piped output get no control characters.  rich is imported only when a
bar is really drawn, so nothing else pays for it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, Callable

ProgressCallback = Callable[[dict[str, Any]], None]

_STAGE_WORDS = {
    "matmul": "matmul",
    "cnn": "CNN training step",
    "bandwidth": "bandwidth",
    "p2p": "peer-to-peer",
    "allreduce": "all-reduce",
    "import": "importing the framework",
    "devices": "finding devices",
}


def count_text(event: dict[str, Any]) -> str:
    """ "3/12" once the probe has planned its workloads; nothing before (importing, finding devices)."""
    done, total = event.get("done"), event.get("total")
    if isinstance(total, int) and not isinstance(total, bool) and isinstance(done, int) and not isinstance(done, bool):
        return f"{done}/{total}"
    return ""


def describe(event: dict[str, Any]) -> str:
    stage = str(event.get("stage") or "")
    detail = str(event.get("detail") or "")
    words = _STAGE_WORDS.get(stage, stage)
    return f"{words} {detail}".strip()


@contextlib.contextmanager
def smoke_progress(enabled: bool, stream: Any = None) -> Iterator[ProgressCallback]:
    """Yield a callback for progress events; it draws a bar on ``stream`` (stderr) when ``enabled``."""
    stream = stream or sys.stderr
    if not enabled or not getattr(stream, "isatty", lambda: False)():
        yield lambda event: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=stream)
    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]smoke[/bold] {task.description}"),
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=None, count="")

        def update(event: dict[str, Any]) -> None:
            total = event.get("total") if isinstance(event.get("total"), int) else None
            done = event.get("done") if isinstance(event.get("done"), int) else None
            progress.update(
                task,
                description=describe(event),
                total=total,
                completed=done if done is not None else 0,
                count=count_text(event),
            )

        yield update
