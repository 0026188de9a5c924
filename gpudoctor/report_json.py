"""The JSON report's shape: the one set of types that ``check --format json`` is built from and that its
schema is generated from.

The result model's ``to_dict()`` methods and :func:`gpudoctor.render.json_report.report_to_dict` return
these TypedDicts, so mypy proves the output has exactly this shape; :mod:`gpudoctor.render.json_schema`
turns them into the JSON Schema that ``gpudoctor schema`` prints (and ``report.schema.json`` holds).
``Annotated`` metadata carries what a Python type cannot say:

- ``Schema(...)``: JSON Schema keywords for the field (its description, a minimum, a pattern, a const);
- an Enum class: the string is one of that enum's values (the JSON holds ``status.value``, a plain str);
- ``OPEN``: the object may carry keys beyond the declared ones.

Rename or remove anything here and :data:`SCHEMA_VERSION` moves; adding a key keeps it.
``Optional`` rather than ``X | None``: the schema is generated at run time, on Python 3.9 too.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Optional, TypedDict

from gpudoctor.results import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    MachineSummary,
    ReportSource,
    Severity,
    Status,
)

# 2: "next_step" (the fix to do first, or null) and "internal_errors" (gpudoctor's own failures
# outside the checks, such as a plugin that failed to import) were added.
# 3: the status "consequence" (a check whose findings follow from another's root cause), and per finding
# "cause", "other_causes", "quote" and "consequence_of".
SCHEMA_VERSION: Final = 3
SCHEMA_ID: Final = f"urn:gpudoctor:report:{SCHEMA_VERSION}"
SCHEMA_TITLE: Final = "gpudoctor JSON report"
SCHEMA_DESCRIPTION: Final = (
    f"Output of 'gpudoctor --format json' (schema_version {SCHEMA_VERSION}). Keys are only ever added within a "
    "schema version; open objects (source, machine, data, sections) may carry more keys."
)

# A check's code, as gpudoctor.api.CODE_PATTERN accepts it (a test holds the two equal).
CHECK_CODE_PATTERN: Final = "^[A-Z][A-Z0-9]*[0-9]{3}$"


class Schema:
    """JSON Schema keywords a field adds to what its type says (``description``, ``minimum``, ...)."""

    def __init__(self, **keywords: object) -> None:
        self.keywords: dict[str, object] = keywords

    def __repr__(self) -> str:
        return f"Schema({self.keywords!r})"


class OpenObject:
    """Marks a TypedDict field as an open object: keys beyond the declared ones are allowed."""


OPEN: Final = OpenObject()

StatusValue = Annotated[str, Status]
SeverityValue = Annotated[str, Severity]
CheckCode = Annotated[str, Schema(pattern=CHECK_CODE_PATTERN)]
Count = Annotated[int, Schema(minimum=0)]


class FixJson(TypedDict):
    """A fix: the exact commands to type."""

    summary: str
    commands: list[str]
    needs_root: bool
    url: Optional[str]


class FindingJson(TypedDict):
    """One thing a check noticed."""

    code: str
    severity: SeverityValue
    message: str
    evidence: list[str]
    fix: Optional[FixJson]
    cause: Annotated[Optional[str], Schema(description="The root cause named, an id of 'gpudoctor kb causes'.")]
    other_causes: Annotated[list[str], Schema(description="Other causes that fit the same evidence, likeliest first.")]
    quote: Annotated[Optional[str], Schema(description="The evidence line(s) that gave the finding away, verbatim.")]
    consequence_of: Annotated[
        Optional[str], Schema(description="The check whose finding this one follows from (shown under it).")
    ]


class ResultJson(TypedDict):
    """One check's result."""

    code: CheckCode
    area: Annotated[str, Schema(minLength=1)]
    title: str
    status: StatusValue
    summary: str
    findings: list[FindingJson]
    data: dict[str, Any]  # JSON-ready values of the check's own choosing (Outcome.data)
    duration_s: Annotated[float, Schema(minimum=0)]
    traceback: Optional[str]


class NextStepJson(TypedDict):
    """The fix to do first, and the check and finding that ask for it."""

    code: CheckCode
    message: str
    fix: FixJson


class CountsJson(TypedDict):
    """Checks per status, one key per :class:`Status` value (a test holds the two together)."""

    ok: Count
    warning: Count
    problem: Count
    not_applicable: Count
    crashed: Count
    consequence: Count


class SummaryJson(TypedDict):
    counts: Annotated[CountsJson, Schema(description="Number of checks with each status; every status is present.")]
    exit_code: Annotated[
        int,
        Schema(
            description="0 clean (warnings allowed), 1 problems (or warnings with --fail-on warning), "
            "3 a check crashed and nothing worse was found.",
            enum=[EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INTERNAL],
        ),
    ]
    worst: Annotated[
        StatusValue,
        Schema(
            description="The most serious status present (problem > crashed > warning > ok > not_applicable); "
            "ok when there are no results."
        ),
    ]


class ToolJson(TypedDict):
    name: Literal["gpudoctor"]
    version: Annotated[str, Schema(minLength=1)]


class ReportJson(TypedDict):
    """The whole document ``check --format json`` prints."""

    schema_version: Annotated[int, Schema(const=SCHEMA_VERSION)]
    tool: ToolJson
    source: Annotated[
        ReportSource,
        OPEN,
        Schema(description='Where the evidence came from: {"kind": "live"} or {"kind": "snapshot", "path": ...}.'),
    ]
    machine: Annotated[
        MachineSummary,
        OPEN,
        Schema(
            description="Summary of the machine (os, kernel, gpus, driver_version, cuda_driver_max, "
            "collect_duration_s, ...); every key is optional."
        ),
    ]
    summary: SummaryJson
    next_step: Annotated[
        Optional[NextStepJson],
        Schema(
            description="The fix to do first: the first problem (else warning) with a fix, reading the areas "
            "from the PCI bus upwards; null when nothing needs fixing."
        ),
    ]
    internal_errors: Annotated[
        list[str],
        Schema(
            description="Failures of gpudoctor itself outside the checks (a check plugin that failed to import); "
            "any makes exit_code 3 unless problems were found."
        ),
    ]
    results: list[ResultJson]
    sections: Annotated[
        dict[str, Any],  # JSON-ready values, keyed by section name (Report.sections)
        Schema(description="Output of later capabilities (frameworks, smoke tests, ...), keyed by name."),
    ]
