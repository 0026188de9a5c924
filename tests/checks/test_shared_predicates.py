"""One rule, one home: the checks, the smoke verdicts and the topology drawing agree on what a narrow or slow
PCIe link is and on which CUDA a driver runs (gpudoctor.facts.predicates)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.predicates import (
    cuda_major_minor,
    driver_older,
    driver_runs_cuda_release,
    lanes_below_best,
    narrow_lanes,
    pcie_slow,
)
from gpudoctor.facts.topology_model import PcieLink
from gpudoctor.kb.driver_cuda import driver_runs_cuda
from gpudoctor.render import topology_svg, topology_text


def test_the_topology_drawing_reads_the_same_rule_as_the_checks():
    # One home: the terminal matrix and the SVG mark links with the predicates the TOPO checks use, so a
    # link that is down (x0) is "down" everywhere, never "narrow" in the drawing alone.
    assert topology_text.narrow_lanes is narrow_lanes
    assert topology_text.pcie_slow is pcie_slow
    assert topology_svg.narrow_lanes is narrow_lanes


def test_narrow_means_fewer_lanes_than_both_ends_support():
    assert lanes_below_best(8, 16) and not lanes_below_best(16, 16) and not lanes_below_best(16, 8)
    # A link that is down (width 0) or unknown is not "narrow": TOPO001 says "down" for the first.
    assert not lanes_below_best(0, 16) and not lanes_below_best(None, 16) and not lanes_below_best(8, None)
    assert narrow_lanes(PcieLink(width_current=4, width_max=16)) == (4, 16)
    assert narrow_lanes(None) is None


@given(st.sampled_from(["12.2", "12.2.2", "12.4.1", "11.8.89", "13.0", "12"]))
def test_an_update_release_runs_wherever_its_major_minor_runs(cuda):
    for driver in ("470.82.01", "525.60.13", "535.54.03", "580.65.06"):
        assert driver_runs_cuda_release(driver, cuda) == driver_runs_cuda(driver, cuda_major_minor(cuda) or cuda)


def test_driver_older_compares_releases_and_refuses_to_guess():
    assert driver_older("535.54.03", "550.54.14") and not driver_older("550.54.14", "535.54.03")
    assert not driver_older("535.54.03", "535.54.03")
    assert not driver_older(None, "535.54.03") and not driver_older("five-three-five", "535.54.03")
