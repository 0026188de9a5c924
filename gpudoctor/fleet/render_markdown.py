"""The fleet report as markdown.  (Stub of the skeleton.)"""

from __future__ import annotations

from gpudoctor.fleet.report_model import FleetReport


def render_fleet_markdown(report: FleetReport) -> str:
    return f"{len(report.nodes)} nodes\n"
