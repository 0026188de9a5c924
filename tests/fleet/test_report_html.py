"""The fleet report's HTML page, opened in a real headless Chromium (see tests/fleet/browser.py).

The fleet reports here are SYNTHETIC (built by the ``synthetic_*`` functions below), except the last test,
which renders the real recorded H100 VM report through the aggregation when that is implemented.  Pages are
opened from a file:// URL with every request routed: anything but the page itself is aborted and fails the
test, so the tests send nothing anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.areas import AREAS
from gpudoctor.fleet.render_html import render_fleet_html
from gpudoctor.fleet.report_model import (
    Drift,
    FleetReport,
    Measurement,
    NodeProblem,
    NodeSummary,
    Outlier,
    ProblemGroup,
    Unreadable,
)
from gpudoctor.render.common import printable
from tests.fleet.browser import headless_chromium, open_page
from tests.helpers.fixtures import real_fixtures_dir

if TYPE_CHECKING:
    from playwright.sync_api import Browser

REPO = pathlib.Path(__file__).resolve().parents[2]
H100 = "NVIDIA H100 80GB HBM3"
SMALL_AREAS = ["pci", "driver", "gpus", "smoke"]
HOSTILE_NODE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_MESSAGE = "</script><script>window.__pwned=2</script>"
HOSTILE_COMMAND = '"; rm -rf / # <b onmouseover="window.__pwned=3">'
HOSTILE_VALUE = "<svg onload=window.__pwned=4>"
HOSTILE_FILE = 'x" onfocus="window.__pwned=5" autofocus="'
HOSTILE_WHY = '<iframe src="http://127.0.0.1:9/"></iframe>'


# --- synthetic fleet reports ------------------------------------------------------------------------------


def synthetic_node(
    name: str,
    worst: str = "ok",
    areas: dict[str, str] | None = None,
    problems: int = 0,
    driver: str = "550.54.15",
    gpu_count: int = 8,
) -> NodeSummary:
    """A SYNTHETIC node summary: ``problems`` DRV002 problems, the given area statuses."""
    found = [
        NodeProblem("DRV002", "driver", "problem", "Driver/library version mismatch", "reboot", "Reboot", "sudo reboot")
        for _ in range(problems)
    ]
    return NodeSummary(
        node=name,
        source=f"/synthetic/{name}.json",
        exit_code=0 if worst == "ok" else 1,
        worst=worst,
        areas=areas if areas is not None else dict.fromkeys(SMALL_AREAS, "ok"),
        problems=found,
        config={"driver": driver, "cuda_driver_max": "12.4"},
        gpu_model=H100,
        gpu_count=gpu_count,
        measurements=[Measurement("matmul bf16", 700.0, "TFLOP/s")],
    )


def synthetic_small_fleet() -> FleetReport:
    """A SYNTHETIC fleet of five nodes whose names sort differently as text and naturally."""
    nodes = [
        synthetic_node("node10", "problem", {"pci": "ok", "driver": "problem", "gpus": "ok"}, problems=2),
        synthetic_node("node2"),
        synthetic_node("node1", "warning", {"pci": "warning", "driver": "ok", "smoke": "ok"}),
        synthetic_node("node33", "crashed", {"pci": "ok", "driver": "crashed"}, problems=12),
        synthetic_node("node3", problems=3, driver="535.104.05"),
    ]
    groups = [
        ProblemGroup(
            "DRV002",
            "problem",
            "Driver/library version mismatch",
            "reboot",
            "Reboot",
            "sudo reboot",
            ["node10", "node33"],
        )
    ]
    drift = [Drift(f"8× {H100}", "driver", "550.54.15", 4, {"535.104.05": ["node3"]})]
    outliers = [Outlier("node2", f"8× {H100}", "matmul bf16", "TFLOP/s", 402.5, 700.0, 3.0, -66.9, 5)]
    return FleetReport(
        nodes=nodes,
        unreadable=[Unreadable("/synthetic/notes.txt", "not JSON")],
        problem_groups=groups,
        drift=drift,
        outliers=outliers,
        areas=SMALL_AREAS,
        missing=[("node4", "srun: error: node4: Communication connection failure")],
    )


def synthetic_hostile_fleet() -> FleetReport:
    """A SYNTHETIC fleet whose every report value is markup or script."""
    node = synthetic_node(HOSTILE_NODE, "problem", {"pci": "ok", "driver": "problem"}, problems=1)
    node.config["driver"] = HOSTILE_VALUE
    return FleetReport(
        nodes=[node, synthetic_node("node2")],
        unreadable=[Unreadable(HOSTILE_FILE, HOSTILE_WHY)],
        problem_groups=[
            ProblemGroup(
                "DRV002", "problem", HOSTILE_MESSAGE, HOSTILE_VALUE, HOSTILE_MESSAGE, HOSTILE_COMMAND, [HOSTILE_NODE]
            )
        ],
        drift=[Drift(f"8× {H100}", HOSTILE_VALUE, HOSTILE_VALUE, 1, {HOSTILE_MESSAGE: [HOSTILE_NODE]})],
        outliers=[Outlier(HOSTILE_NODE, HOSTILE_VALUE, HOSTILE_MESSAGE, HOSTILE_VALUE, 1.0, 2.0, 0.1, -6.7, 2)],
        areas=SMALL_AREAS,
        missing=[(HOSTILE_NODE, HOSTILE_WHY)],
    )


def synthetic_large_fleet(count: int) -> FleetReport:
    """A SYNTHETIC fleet of ``count`` nodes over every known area, one in seven with a problem."""
    keys = [area.key for area in AREAS]
    nodes = []
    for i in range(count):
        bad = i % 7 == 3
        areas = dict.fromkeys(keys, "ok")
        if bad:
            areas["driver"] = "problem"
        nodes.append(synthetic_node(f"node{count - i}", "problem" if bad else "ok", areas, problems=int(bad)))
    return FleetReport(nodes=nodes, unreadable=[], problem_groups=[], drift=[], outliers=[], areas=keys)


# --- the page in a browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with headless_chromium() as launched:
        yield launched


def test_synthetic_page_loads_with_no_console_error_and_no_request(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path)
    assert opened.requests == [opened.url]
    assert opened.errors == []
    text = opened.page.inner_text("body")
    assert "Needs attention" in text
    assert "sudo reboot" in opened.page.inner_text("#problems code >> nth=1")
    assert opened.row_names("#outliers-table") == ["node2"]
    assert opened.row_names("#missing-table") == ["node4"]
    assert opened.row_names("#unreadable-table") == ["/synthetic/notes.txt"]
    assert "535.104.05" in opened.page.inner_text("#drift-table")


def test_node_header_sorts_naturally_and_reverses(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path)
    assert opened.row_names() == ["node10", "node2", "node1", "node33", "node3"]
    assert opened.aria_sort("Node") is None
    opened.click_header("Node")
    assert opened.row_names() == ["node1", "node2", "node3", "node10", "node33"]
    assert opened.aria_sort("Node") == "ascending"
    opened.click_header("Node")
    assert opened.row_names() == ["node33", "node10", "node3", "node2", "node1"]
    assert opened.aria_sort("Node") == "descending"
    assert opened.page.inner_text("#sort-status") == "Sorted by Node, descending."
    assert opened.errors == []


def test_status_columns_sort_by_severity_worst_first(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path)
    opened.click_header("Worst")
    assert opened.row_names()[:3] == ["node10", "node33", "node1"]  # problem, crashed, warning, then the ok ones
    assert opened.aria_sort("Worst") == "descending"
    opened.click_header("Worst")
    assert opened.row_names()[-3:] == ["node1", "node33", "node10"]
    assert opened.aria_sort("Worst") == "ascending"
    assert opened.aria_sort("Node") is None
    opened.click_header("driver")  # an area column: node10's driver has a problem, node33's check crashed
    assert opened.row_names()[:2] == ["node10", "node33"]
    assert opened.aria_sort("Worst") is None


def test_count_column_sorts_numerically_and_status_is_text_not_colour_alone(
    browser: Browser, tmp_path: pathlib.Path
) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path)
    opened.click_header("Problems")
    names = opened.row_names()
    assert names.index("node10") < names.index("node3") < names.index("node33")  # 2 < 3 < 12, not "12" < "2"
    worst = opened.page.eval_on_selector_all(
        "#nodes-table tbody tr > td:nth-child(3)", "cells => cells.map(c => c.innerText)"
    )
    assert {w.split()[-1] for w in worst} == {"problem", "ok", "warning", "crashed"}


def test_sort_is_keyboard_accessible(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path)
    button = opened.page.locator(f"{opened.header('Node')} > button")
    button.focus()
    opened.page.keyboard.press("Enter")
    assert opened.aria_sort("Node") == "ascending"
    opened.page.keyboard.press("Space")
    assert opened.aria_sort("Node") == "descending"
    assert opened.row_names()[0] == "node33"


def test_hostile_values_render_as_text_and_run_nothing(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_hostile_fleet()), tmp_path)
    page = opened.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.strangers() == []
    assert opened.errors == []
    assert page.get_by_role("rowheader", name=HOSTILE_NODE).first.is_visible()
    assert HOSTILE_MESSAGE in page.inner_text("#problems")
    assert HOSTILE_COMMAND in page.inner_text("#problems code >> nth=1")
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, b').length") == 0
    assert page.evaluate("document.scripts.length") == 1
    opened.click_header("Node")  # the page's own script still runs
    assert opened.row_names()[0] == HOSTILE_NODE


def test_hostile_values_stay_text_even_without_the_policy(browser: Browser, tmp_path: pathlib.Path) -> None:
    """The escaping alone holds: the same page with its CSP removed still builds no element from data."""
    page_html = re.sub(
        r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", render_fleet_html(synthetic_hostile_fleet())
    )
    assert "Content-Security-Policy" not in page_html
    opened = open_page(browser, page_html, tmp_path)
    assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.strangers() == []
    assert opened.page.evaluate("document.querySelectorAll('img, svg, iframe, b').length") == 0


def sha256_source(block: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(block.encode()).digest()).decode() + "'"


def test_policy_admits_exactly_the_page_script_and_style(browser: Browser, tmp_path: pathlib.Path) -> None:
    page_html = render_fleet_html(synthetic_small_fleet())
    parsed = parse(page_html)
    policy = dict(part.strip().split(" ", 1) for part in parsed.csp.split(";"))
    assert policy["script-src"] == sha256_source(parsed.script)
    assert policy["style-src"] == sha256_source(parsed.style)
    assert policy["default-src"] == "'none'"
    opened = open_page(browser, page_html, tmp_path)
    opened.click_header("Node")
    assert opened.aria_sort("Node") == "ascending"  # the browser ran the script: it accepted the hash
    problem_colour = opened.page.eval_on_selector(
        "#nodes-table td.s-problem", "c => getComputedStyle(c).backgroundColor"
    )
    assert problem_colour == "rgb(253, 231, 233)"  # and it applied the stylesheet
    assert opened.errors == []
    # The control: change the script by one character and the browser refuses it, so the sort never runs.
    tampered = page_html.replace('"use strict";', '"use strict"; ', 1)
    refused = open_page(browser, tampered, tmp_path)
    refused.click_header("Node")
    assert refused.aria_sort("Node") is None
    assert any("Content Security Policy" in error for error in refused.errors)


def test_page_reads_without_javascript(browser: Browser, tmp_path: pathlib.Path) -> None:
    opened = open_page(browser, render_fleet_html(synthetic_small_fleet()), tmp_path, javascript=False)
    assert opened.row_names() == ["node10", "node2", "node1", "node33", "node3"]
    assert "problem" in opened.page.inner_text("#nodes-table tbody tr >> nth=0")
    assert opened.strangers() == []


def test_large_synthetic_report_sorts(browser: Browser, tmp_path: pathlib.Path) -> None:
    count = 3000
    opened = open_page(browser, render_fleet_html(synthetic_large_fleet(count)), tmp_path)
    page = opened.page
    assert page.locator("#nodes-table tbody tr").count() == count
    opened.click_header("Node")
    page.wait_for_selector(f'{opened.header("Node")}[aria-sort="ascending"]', timeout=60_000)
    assert opened.row_names()[:3] == ["node1", "node2", "node3"]
    assert opened.row_names()[-1] == f"node{count}"
    opened.click_header("Worst")
    page.wait_for_selector(f'{opened.header("Worst")}[aria-sort="descending"]', timeout=60_000)
    first = page.inner_text("#nodes-table tbody tr:first-child > td:nth-child(3)")
    assert first.split()[-1] == "problem"
    assert opened.errors == []


def real_node_report(snapshot: pathlib.Path) -> str:
    """``gpudoctor check --from SNAPSHOT --format json``: the report a node writes."""
    command = [sys.executable, "-m", "gpudoctor", "check", "--from", str(snapshot), "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_real_node_reports_render(browser: Browser, tmp_path: pathlib.Path) -> None:
    """Real reports through the fleet aggregation: the recorded H100 VM (clean) and, where the shared corpus is
    present, a node whose only evidence is a real captured "Driver/library version mismatch" (DRV002)."""
    from gpudoctor.fleet.report_aggregate import aggregate

    recorded = REPO / "tests" / "recorded" / "h100-80gb-hbm3-vm"
    if not recorded.is_dir():
        pytest.skip(f"the recorded snapshot {recorded} is absent")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "h100-vm.json").write_text(real_node_report(recorded), encoding="utf-8")
    mismatch = real_fixtures_dir() / "C" / "err-nvml-version-mismatch-reboot-illinois-60.txt"
    if mismatch.is_file():
        snapshot = tmp_path / "mismatch-snapshot"
        snapshot.mkdir()
        (snapshot / "nvidia-smi.txt").write_text(mismatch.read_text(encoding="utf-8"), encoding="utf-8")
        (reports / "node-mismatch.json").write_text(real_node_report(snapshot), encoding="utf-8")
    fleet = aggregate([str(reports)])
    if not fleet.nodes:
        pytest.skip("gpudoctor.fleet.report_aggregate.aggregate returns no nodes (still the skeleton's stub)")
    opened = open_page(browser, render_fleet_html(fleet), tmp_path)
    assert opened.errors == []
    assert opened.strangers() == []
    assert sorted(opened.row_names()) == sorted(n.node for n in fleet.nodes)
    assert H100 in opened.page.inner_text("#nodes-table")
    if mismatch.is_file():
        assert "DRV002" in opened.page.inner_text("#problems")
        opened.click_header("Worst")
        assert opened.row_names()[0] == "node-mismatch"
        assert opened.page.inner_text("#nodes-table tbody tr:first-child > td:nth-child(3)").split()[-1] == "problem"


# --- without a browser --------------------------------------------------------------------------------------

_VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "wbr", "source", "track", "embed"}
_OUR_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "ul", "ol", "li", "span", "main",
    "section", "div", "table", "caption", "thead", "tbody", "tr", "th", "td", "button", "strong", "code",
    "details", "summary", "script",
}  # fmt: skip


class _PageParser(HTMLParser):
    """Walks the page: every element closed in order, and what it has in attributes, text and script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.csp = ""
        self.script = ""
        self.style = ""
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = {name: value or "" for name, value in attrs}
        self.attributes.extend(values.items())
        if tag == "meta" and values.get("http-equiv") == "Content-Security-Policy":
            self.csp = values["content"]
        self.scripts += tag == "script"
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "script":
            self.script += data
        elif self.stack and self.stack[-1] == "style":
            self.style += data
        else:
            self.text.append(data)


def parse(page_html: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(page_html)
    parser.close()
    assert parser.stack == [], f"left open: {parser.stack}"
    return parser


def assert_safe_structure(parsed: _PageParser) -> None:
    assert parsed.tags <= _OUR_TAGS, parsed.tags - _OUR_TAGS
    assert parsed.scripts == 1
    names = {name for name, _ in parsed.attributes}
    assert not any(name.startswith("on") for name in names)
    assert not names & {"src", "href", "action", "srcset", "style", "formaction", "background"}
    urls = [value for name, value in parsed.attributes if re.search(r"(?i)(https?|ftp|file|data|javascript):", value)]
    assert urls == []


def test_page_is_well_formed_and_links_nothing() -> None:
    page_html = render_fleet_html(synthetic_small_fleet())
    parsed = parse(page_html)
    assert_safe_structure(parsed)
    assert parsed.csp.startswith("default-src 'none';")
    assert not re.search(r"(?i)url\(|@import|https?://", page_html)


def test_empty_fleet_renders() -> None:
    parsed = parse(render_fleet_html(FleetReport([], [], [], [], [], [])))
    assert "No node reports." in "".join(parsed.text)


def test_hostile_values_are_escaped_in_the_source() -> None:
    page_html = render_fleet_html(synthetic_hostile_fleet())
    for hostile in (HOSTILE_NODE, HOSTILE_MESSAGE, HOSTILE_COMMAND, HOSTILE_VALUE, HOSTILE_FILE, HOSTILE_WHY):
        assert hostile not in page_html
    parsed = parse(page_html)
    assert_safe_structure(parsed)
    text = "".join(parsed.text)
    assert HOSTILE_NODE in text and HOSTILE_MESSAGE in text and HOSTILE_COMMAND in text


@settings(max_examples=60)
@given(node=st.text(), message=st.text(), command=st.text(), value=st.text())
def test_any_report_text_stays_text(node: str, message: str, command: str, value: str) -> None:
    """Whatever a report says (any code points, controls included), the page's structure is the renderer's."""
    fleet = synthetic_hostile_fleet()
    fleet.nodes[0].node = node
    fleet.nodes[0].config["driver"] = value
    fleet.problem_groups[0] = ProblemGroup("DRV002", "problem", message, None, value, command, [node])
    fleet.missing = [(value, message)]
    parsed = parse(render_fleet_html(fleet))
    assert_safe_structure(parsed)
    text = "".join(parsed.text)
    for said in (node, message, command, value):
        assert printable(said) in text
