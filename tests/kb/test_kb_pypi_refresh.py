"""The knowledge base's torch table follows the package index past the shared reference: torch 2.15, on PyPI
since 2026-10-28, is a confirmed release (with only what PyPI's metadata shows), never "not confirmed"."""

from __future__ import annotations

import json
import pathlib
import sys

from gpudoctor import kb
from gpudoctor.kb.describe import render_kb_text

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from kbtools.refresh.pypi import TORCH_ON_PYPI, confirmed_row, drop_unconfirmed_words  # noqa: E402

DATA = pathlib.Path(kb.__file__).resolve().parent / "data" / "pytorch.json"


def test_torch_2_15_is_confirmed_with_its_pypi_build_only():
    data = json.loads(DATA.read_text())
    assert "2.15" not in {row["torch"] for row in data["unconfirmed_releases"]}
    assert "not confirmed" not in data["coverage"]
    release = kb.torch_release("2.15.0")
    assert release is not None and release.python_min == "3.11" and release.python_max == "3.15"
    (variant,) = release.variants
    assert (variant.variant, variant.cuda, variant.cudnn) == ("cu132", "13.2", "9.26.0.51")
    assert variant.arch_list is None  # PyPI does not say; not claimed
    assert "P_PYPI" in data["sources"] and data["sources"]["P_PYPI"]["url"] == "https://pypi.org/pypi/torch/json"


def test_the_kb_command_no_longer_calls_it_unconfirmed():
    text = render_kb_text(topic="torch")
    assert "\n2.15 " in text and "not confirmed" not in text


def test_the_pypi_table_rewrites_only_releases_it_confirms():
    assert confirmed_row("2.16", None) is None
    row = confirmed_row("2.15", "Not confirmed released.")
    assert row is not None and "not confirmed" not in row["note"].lower()
    assert row["variant"]["variant"] == TORCH_ON_PYPI["2.15"]["default_pypi_linux_x86_64"]
    text = "Matrices to 2.14. torch 2.15 (scheduled 2026-10-28) not confirmed. Windows: x."
    assert drop_unconfirmed_words(text, ["2.15"]) == "Matrices to 2.14. Windows: x."
    assert drop_unconfirmed_words(text, ["2.16"]) == text


def test_cupy_cuda13x_first_release_is_confirmed_from_pypi():
    data = json.loads((DATA.parent / "python_gpu_packages.json").read_text())
    (row,) = [p for p in data["cupy"]["packages"] if p["package"] == "cupy-cuda13x"]
    assert row["cupy_versions"].startswith("v13.6.0 and later") and "not confirmed" not in (row["note"] or "")
    assert "CUPY_PYPI13" in row["sources"] and data["sources"]["CUPY_PYPI13"]["secondary"] is False


def test_a_release_known_only_from_pypi_is_never_chosen_as_an_install_target():
    # Its download.pytorch.org variants were not read: the newest verified release is offered instead.
    for driver in ("595.58.03", None):
        choice = kb.choose_torch_wheel(
            driver_version=driver, compute_capabilities=("9.0",), python_version="3.12", os="linux"
        )
        assert choice.status == "ok" and choice.torch == "2.14", choice
    assert kb.torch_release("2.15.0").index_verified is False
