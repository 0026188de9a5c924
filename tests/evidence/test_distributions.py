"""The dist-info reader agrees with importlib.metadata on the real installed distributions."""

from __future__ import annotations

import importlib.metadata as metadata

from gpudoctor.distributions import canonical, entry_points, find_distribution


def test_entry_points_match_importlib_metadata():
    ours = {(ep.name, ep.value) for ep in entry_points("gpudoctor.checks")}
    theirs = {(ep.name, ep.value) for ep in metadata.entry_points(group="gpudoctor.checks")}
    assert ours == theirs
    assert ("driver", "gpudoctor_checks.driver") in ours


def test_find_distribution_version_and_files():
    dist = find_distribution("nvidia_ml_py")
    assert dist is not None
    assert dist.version == metadata.version("nvidia-ml-py")
    assert "pynvml.py" in dist.files()
    assert find_distribution("surely-not-installed-anywhere") is None


def test_canonical_names():
    assert canonical("Nvidia_ML.py") == canonical("nvidia-ml-py") == "nvidia-ml-py"


def test_unreadable_path_entries_are_skipped(tmp_path):
    (tmp_path / "broken-1.0.dist-info").mkdir()
    assert entry_points("gpudoctor.checks", paths=[str(tmp_path / "missing"), str(tmp_path)]) == []
    found = find_distribution("broken", paths=[str(tmp_path)])
    assert found is not None and found.version == "1.0" and found.files() == []
