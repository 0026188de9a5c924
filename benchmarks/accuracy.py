"""Diagnosis accuracy on real pastes: replay the public corpus through ``gpudoctor check --from``.

Each case in ``benchmarks/accuracy_corpus/<category>/`` is a text a user pasted into a public thread
(``<id>.txt``, verbatim) and what the thread established (``<id>.json``: the URL, the root cause in words and
as a cause id, the verdict, the facts the paste shows).  A case is read exactly as ``check --from FILE``
reads it, and scored:

* broken / warning cases: *diagnosed* when a warning or problem finding names the established cause (as its
  cause, or among its two next-likeliest); *silent* when the report exits 0 with no warning at all;
* healthy cases: a *false alarm* when the report has a problem (exit 1);
* facts: each fact the paste shows must be among the values the report lists as seen (``facts_seen``).

Usage: ``python benchmarks/accuracy.py [--category C] [--misses] [--json]``.  Exit 0 when every target of
issue 15 holds (>= 90 % diagnosed per category, 0 silent, <= 5 % false alarms, >= 98 % of facts), else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "accuracy_corpus")
CATEGORIES = ("collect_env", "tensorflow", "nvidia_smi", "kernel_log", "containers_wsl", "tracebacks", "mixed")
FACT_KEYS = {
    "gpu_names": "gpu_names",
    "driver_version": "driver_versions",
    "cuda_driver": "cuda_driver_versions",
    "cuda_runtime": "cuda_runtime_versions",
    "torch_version": "torch_versions",
    "torch_cuda": "torch_cuda_versions",
    "tensorflow_version": "tensorflow_versions",
    "cudnn_version": "cudnn_versions",
}
TARGET_DIAGNOSED = 0.90
TARGET_FALSE_ALARMS = 0.05
TARGET_FACTS = 0.98


@dataclass
class Case:
    id: str
    category: str
    text_path: str
    meta: dict[str, Any]

    @property
    def verdict(self) -> str:
        return str(self.meta.get("verdict", ""))

    @property
    def cause(self) -> str | None:
        cause = self.meta.get("cause")
        return cause if isinstance(cause, str) and cause else None


@dataclass
class CaseResult:
    case: Case
    exit_code: int
    worst: str
    named: bool
    causes_named: list[str]
    facts_expected: int = 0
    facts_found: int = 0
    facts_missed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def silent(self) -> bool:
        return self.exit_code == 0 and self.worst not in ("warning", "problem")

    @property
    def false_alarm(self) -> bool:
        return self.case.verdict == "healthy" and self.exit_code == 1


def load_cases(corpus: str = CORPUS) -> list[Case]:
    """Every case of the corpus, by category then id."""
    cases = []
    if not os.path.isdir(corpus):
        return cases
    for category in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, category)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json"):
                continue
            case_id = name[: -len(".json")]
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                meta = json.load(handle)
            cases.append(Case(case_id, category, os.path.join(folder, case_id + ".txt"), meta))
    return cases


def _same_value(expected: str, seen: str) -> bool:
    a, b = " ".join(expected.lower().split()), " ".join(seen.lower().split())
    if a == b or (a and a in b) or (b and b in a and len(b) >= 4):
        return True
    return a.startswith(b + ".") or b.startswith(a + ".")


def _facts(case: Case, seen: dict[str, list[str]]) -> tuple[int, int, list[str]]:
    expected_facts = case.meta.get("facts") or {}
    total = found = 0
    missed = []
    for key, values in expected_facts.items():
        seen_key = FACT_KEYS.get(key)
        if seen_key is None:
            continue
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or not value:
                continue
            total += 1
            if any(_same_value(value, s) for s in seen.get(seen_key, [])):
                found += 1
            else:
                missed.append(f"{key}={value}")
    return total, found, missed


def replay(case: Case) -> CaseResult:
    """One case through the same reading and checks as ``gpudoctor check --from``."""
    from gpudoctor.commands.report import build_report
    from gpudoctor.evidence.snapshot import read_snapshot
    from gpudoctor.render.common import worst_status

    started = time.perf_counter()
    evidence = read_snapshot(case.text_path)
    options: Any = {
        "require_gpu": False,
        "min_gpus": None,
        "min_compute_capability": None,
        "min_gpu_memory": None,
        "min_driver": None,
        "cuda": None,
    }
    report, _ = build_report(evidence, options)
    seconds = time.perf_counter() - started
    named_causes: list[str] = []
    for result in report.results:
        for finding in result.findings:
            flagged = finding.severity.value in ("warning", "problem") or finding.consequence_of
            if flagged and finding.cause:
                named_causes += [finding.cause, *finding.other_causes[:2]]
    seen = report.machine.get("facts_seen") or {}
    total, found, missed = _facts(case, dict(seen))
    return CaseResult(
        case=case,
        exit_code=report.exit_code(),
        worst=worst_status(report.results).value,
        named=case.cause is not None and case.cause in named_causes,
        causes_named=list(dict.fromkeys(named_causes)),
        facts_expected=total,
        facts_found=found,
        facts_missed=missed,
        seconds=seconds,
    )


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def summarise(results: list[CaseResult]) -> tuple[list[dict[str, Any]], bool]:
    """One row per category plus the total, and whether every target holds."""
    rows = []
    ok = True
    for category in [*CATEGORIES, "all"]:
        picked = [r for r in results if category == "all" or r.case.category == category]
        if not picked:
            continue
        broken = [r for r in picked if r.case.verdict in ("broken", "warning")]
        healthy = [r for r in picked if r.case.verdict == "healthy"]
        diagnosed = sum(r.named for r in broken)
        silent = sum(r.silent for r in broken if r.case.verdict == "broken")
        alarms = sum(r.false_alarm for r in healthy)
        facts_expected = sum(r.facts_expected for r in picked)
        facts_found = sum(r.facts_found for r in picked)
        row = {
            "category": category,
            "cases": len(picked),
            "broken": len(broken),
            "diagnosed": diagnosed,
            "missed": len(broken) - diagnosed,
            "silent": silent,
            "healthy": len(healthy),
            "false_alarms": alarms,
            "facts_expected": facts_expected,
            "facts_found": facts_found,
            "max_seconds": round(max(r.seconds for r in picked), 3),
        }
        rows.append(row)
        if broken and diagnosed < TARGET_DIAGNOSED * len(broken):
            ok = False
        if silent or (healthy and alarms > TARGET_FALSE_ALARMS * len(healthy)):
            ok = False
        if facts_expected and facts_found < TARGET_FACTS * facts_expected:
            ok = False
    return rows, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--category", choices=CATEGORIES, help="only this category")
    parser.add_argument("--misses", action="store_true", help="list every missed, silent or false-alarm case")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--corpus", default=CORPUS, help="a corpus folder of the same layout (default: %(default)s)")
    args = parser.parse_args(argv)
    cases = [c for c in load_cases(args.corpus) if args.category in (None, c.category)]
    if not cases:
        print(f"no cases under {args.corpus}", file=sys.stderr)
        return 2
    results = [replay(case) for case in cases]
    rows, ok = summarise(results)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        header = f"{'category':<15} {'cases':>5}  {'diagnosed':<16} {'silent':>6}  {'false alarms':<14} {'facts':<16}"
        print(header)
        for row in rows:
            print(
                f"{row['category']:<15} {row['cases']:>5}  {_ratio(row['diagnosed'], row['broken']):<16} "
                f"{row['silent']:>6}  {_ratio(row['false_alarms'], row['healthy']):<14} "
                f"{_ratio(row['facts_found'], row['facts_expected']):<16}"
            )
        slowest = max(results, key=lambda r: r.seconds)
        print(f"slowest case: {slowest.case.category}/{slowest.case.id} {slowest.seconds:.3f} s")
    if args.misses:
        for r in results:
            wrong = (r.case.verdict in ("broken", "warning") and not r.named) or r.false_alarm
            if wrong or r.facts_missed:
                what = "FALSE ALARM" if r.false_alarm else ("missed" if wrong else "facts")
                print(
                    f"{what}: {r.case.category}/{r.case.id} expected={r.case.cause} named={r.causes_named} "
                    f"exit={r.exit_code} worst={r.worst} facts_missed={r.facts_missed}"
                )
    print("targets met" if ok else "targets NOT met", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
