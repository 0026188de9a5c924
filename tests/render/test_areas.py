"""The areas table: every check's area has a title and an order, and every output reads them from there."""

from __future__ import annotations

from gpudoctor.areas import AREAS, area_for_code, area_order, area_title
from gpudoctor.registry import load_registry
from gpudoctor.render.junit import render_junit
from gpudoctor.render.terminal import render_terminal
from gpudoctor.results import CheckResult, Report, Status, group_by_area


def test_every_registered_check_has_a_known_area_with_its_code_prefix():
    registry = load_registry()
    assert registry.checks and not registry.load_errors, registry.load_errors
    titles = {area.key: area.title for area in AREAS}
    for spec in registry.checks:
        assert area_order(spec.area) is not None, f"{spec.code}: area {spec.area!r} is not in the areas table"
        assert area_title(spec.area) == titles[spec.area]
        area = area_for_code(spec.code)
        assert area is not None and area.key == spec.area, f"{spec.code} is in {spec.area!r}, its prefix says {area}"


def test_the_table_is_consistent():
    keys = [area.key for area in AREAS]
    prefixes = [prefix for area in AREAS for prefix in area.prefixes]
    assert len(set(keys)) == len(keys) and len(set(prefixes)) == len(prefixes)
    assert all(area.title for area in AREAS)


def _report(*areas: str) -> Report:
    results = [CheckResult(f"TST{n:03d}", area, "t", Status.OK, "s") for n, area in enumerate(areas)]
    return Report(results=results, source={"kind": "live"})


def test_areas_appear_in_table_order_with_plugins_last():
    report = _report("example", "cuda", "topology", "health", "pci")
    assert [area for area, _ in group_by_area(report.results)] == ["pci", "health", "topology", "cuda", "example"]
    text = render_terminal(report)
    positions = [
        text.index(title) for title in ("PCI bus", "GPU health", "Topology (PCIe, NVLink, NUMA)", "CUDA toolkit")
    ]
    assert positions == sorted(positions) and text.index("\nexample\n") > positions[-1]
    xml = render_junit(report)
    suites = [xml.index(f'testsuite name="{key}"') for key in ("pci", "health", "topology", "cuda", "example")]
    assert suites == sorted(suites)
