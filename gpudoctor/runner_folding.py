"""One root cause, one problem: findings that follow from another are shown under it.

Checks name the root cause of each finding (``Finding.cause``, ids of ``gpudoctor.kb.causes``).  After every
check has run, a finding is folded under another when its cause follows from the other's (``leads_to``,
transitively: "CUDA is not usable" follows from "the kernel module is not loaded"), or when an earlier check
(in the areas' bottom-up order) already named the same cause.  A folded finding becomes a note that names the
root's check (``consequence_of``); the root takes the worst severity of what it explains, so folding never
makes a report look better than it is.  A check whose every warning or problem was folded has the status
``consequence``.

Causes marked ``yields`` in the table (e.g. "the evidence does not show the GPU stack working") stand only on
their own: when any other cause is named, they are folded under the first of them.
"""

from __future__ import annotations

import dataclasses

from gpudoctor.areas import ordered_keys
from gpudoctor.results import CheckResult, Finding, Severity, Status

_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.PROBLEM: 2}


def _status(findings: list[Finding], folded_any: bool) -> Status:
    severities = {f.severity for f in findings}
    if Severity.PROBLEM in severities:
        return Status.PROBLEM
    if Severity.WARNING in severities:
        return Status.WARNING
    return Status.CONSEQUENCE if folded_any else Status.OK


def _bottom_up(results: list[CheckResult]) -> list[tuple[int, int]]:
    """(result index, finding index) of every cause-naming warning or problem, areas bottom-up."""
    area_rank = {area: rank for rank, area in enumerate(ordered_keys([r.area for r in results]))}
    order = sorted(range(len(results)), key=lambda i: (area_rank[results[i].area], i))
    return [
        (i, j)
        for i in order
        for j, finding in enumerate(results[i].findings)
        if finding.cause and finding.severity is not Severity.INFO
    ]


def fold_consequences(results: list[CheckResult]) -> list[CheckResult]:
    """The results with each consequence folded under its root (a new list; the input is not changed)."""
    from gpudoctor.kb.causes import cause as cause_entry
    from gpudoctor.kb.causes import consequences

    named = _bottom_up(results)
    if len(named) < 2:
        return results
    causes = [results[i].findings[j].cause for i, j in named]
    yielding = {c for c in causes if (entry := cause_entry(c)) is not None and entry.yields}
    first_of: dict[str, int] = {}
    for position, cause_id in enumerate(causes):
        first_of.setdefault(cause_id, position)
    standing = [c for c in first_of if c not in yielding]
    root_of: dict[int, int] = {}  # position in ``named`` -> position of its root
    for position, cause_id in enumerate(causes):
        if cause_id in yielding and standing:
            root_of[position] = first_of[standing[0]]
            continue
        upstream = [
            other
            for other in standing
            if other != cause_id and cause_id in consequences(other) and other not in consequences(cause_id)
        ]
        if upstream:
            root_of[position] = min(first_of[other] for other in upstream)
        elif first_of[cause_id] != position:
            root_of[position] = first_of[cause_id]
    if not root_of:
        return results
    # A root that is itself folded (a chain) points at its own root.
    for position in list(root_of):
        seen = {position}
        while root_of[position] in root_of and root_of[position] not in seen:
            seen.add(root_of[position])
            root_of[position] = root_of[root_of[position]]
    return _apply(results, named, root_of)


def _apply(results: list[CheckResult], named: list[tuple[int, int]], root_of: dict[int, int]) -> list[CheckResult]:
    findings = [list(r.findings) for r in results]
    folded_in: set[int] = set()
    worst: dict[int, Severity] = {}
    for position, root in root_of.items():
        i, j = named[position]
        root_i, root_j = named[root]
        finding = findings[i][j]
        root_code = results[root_i].code
        current = worst.get(root, results[root_i].findings[root_j].severity)
        if _RANK[finding.severity] > _RANK[current]:
            worst[root] = finding.severity
        findings[i][j] = dataclasses.replace(
            finding,
            severity=Severity.INFO,
            message=f"follows from {root_code}: {finding.message}",
            consequence_of=root_code,
        )
        folded_in.add(i)
    for root, severity in worst.items():
        i, j = named[root]
        findings[i][j] = dataclasses.replace(findings[i][j], severity=severity)
    changed = folded_in | {named[root][0] for root in worst}
    folded: list[CheckResult] = []
    for i, result in enumerate(results):
        if i not in changed:
            folded.append(result)
            continue
        status = _status(findings[i], i in folded_in)
        summary = result.summary
        if status is Status.CONSEQUENCE:
            roots = sorted({f.consequence_of for f in findings[i] if f.consequence_of})
            summary = f"follows from {', '.join(roots)}: {result.summary}"
        folded.append(dataclasses.replace(result, findings=findings[i], status=status, summary=summary))
    return folded
