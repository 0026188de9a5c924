"""The fleet report as text.  (Stub of the skeleton.)"""

from __future__ import annotations

from gpudoctor.fleet.report_model import FleetReport


def render_fleet_text(report: FleetReport, color: bool = False) -> str:
    return f"{len(report.nodes)} nodes\n"
