"""``fleet report``: node reports read one at a time into summaries, then grouped.  (Stub of the skeleton.)"""

from __future__ import annotations

from gpudoctor.fleet.report_model import FleetReport


def aggregate(paths: list[str]) -> FleetReport:
    return FleetReport(nodes=[], unreadable=[], problem_groups=[], drift=[], outliers=[], areas=[])
