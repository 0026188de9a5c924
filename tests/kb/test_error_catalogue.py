"""The error-signature catalogue and the causes table: complete, consistent, and matching real text."""

from __future__ import annotations

import re

import pytest

from gpudoctor.areas import AREAS
from gpudoctor.facts.signature_scan import scan_text
from gpudoctor.kb.causes import all_causes
from gpudoctor.kb.fix_texts import all_fix_texts
from gpudoctor.kb.signatures import SEVERITIES, all_signatures
from tests.helpers.fixtures import fixture_files, read_fixture

AREA_KEYS = {area.key for area in AREAS}
SIGNATURES = all_signatures()


def test_the_catalogue_covers_at_least_150_known_errors() -> None:
    assert len(SIGNATURES) >= 150
    assert len({s.group for s in SIGNATURES}) >= 5


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.id)
def test_each_signature_is_complete_and_matches_its_real_examples(signature) -> None:  # type: ignore[no-untyped-def]
    assert signature.severity in SEVERITIES
    assert signature.component in AREA_KEYS
    assert signature.causes and set(signature.causes) <= set(all_causes())
    assert signature.sources and all(s.strip() for s in signature.sources)
    assert signature.examples
    assert not signature.source.startswith(".*") and not signature.source.endswith(".*")
    for example in signature.examples:
        assert signature.pattern.search(" ".join(example.split())), example
        # Through the scanner too: found on its own, also when a terminal wrapped it at every space.
        assert [m.signature.id for m in scan_text(example, "x", (signature,))] == [signature.id]
        assert scan_text(example.replace(" ", "\n"), "x", (signature,)), example


def test_no_two_signatures_share_an_id() -> None:
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids))


def test_causes_name_known_components_and_fixes() -> None:
    fix_texts = all_fix_texts()
    for cause in all_causes().values():
        assert cause.component in AREA_KEYS, cause.id
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", cause.id), cause.id
    for fix in fix_texts.values():
        assert fix.summary.endswith((".", ")")), fix.id


# Healthy real outputs (../shared/fixtures): no warning or problem signature may fire on them.
HEALTHY_SETS = ("A", "B", "D")


@pytest.mark.parametrize("subdir", HEALTHY_SETS)
def test_no_false_alarm_on_healthy_real_outputs(subdir: str) -> None:
    for path in fixture_files(subdir, "*"):
        alarms = [m for m in scan_text(read_fixture(path), path.name) if m.signature.severity != "info"]
        assert not alarms, (path.name, [(m.signature.id, m.quote) for m in alarms])


def test_a_large_hostile_text_is_scanned_in_one_pass() -> None:
    # Synthetic: near-misses of many patterns repeated (no timing asserted; it must simply finish).
    text = ("CUDA error: CUDA_ERROR_ NVRM: Xid (PCI: libcudart.so. cannot open " * 200 + "\n") * 50
    assert isinstance(scan_text(text, "x"), list)


def test_every_signature_has_needles_so_a_long_log_is_searched_only_around_them() -> None:
    # Speed contract: without a literal every match contains, a pattern runs over the whole of a 1 MiB paste.
    assert [s.id for s in SIGNATURES if not s.needles] == []


def test_stored_needles_are_what_each_pattern_gives() -> None:
    # The catalogue stores each pattern's needles so a run need not derive them; they must never drift.
    from gpudoctor.kb.signatures import derived_needles

    stale = [s.id for s in SIGNATURES if s.needles != derived_needles(s.source)]
    assert not stale, f"run `python -m gpudoctor.kb.signatures --write-needles` ({stale[:5]})"
