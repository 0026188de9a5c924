"""The README's checks table is the user's list of what gpudoctor checks: every registered check code is in it
(by its code, or inside a range such as GATE001–006), so a new check cannot ship undocumented."""

from __future__ import annotations

import pathlib
import re

from gpudoctor.registry import load_registry

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
_RANGE = re.compile(r"\b([A-Z]+)(\d{3})[–-](\d{3})\b")


def _documented(code: str, text: str, ranges: list[tuple[str, int, int]]) -> bool:
    if re.search(rf"\b{code}\b", text):
        return True
    letters, number = code.rstrip("0123456789"), int(code[len(code.rstrip("0123456789")) :])
    return any(letters == prefix and low <= number <= high for prefix, low, high in ranges)


def test_every_registered_check_is_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    ranges = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _RANGE.finditer(text)]
    codes = [spec.code for spec in load_registry().checks]
    assert len(codes) > 50  # the registry was read, not an empty one
    assert [code for code in codes if not _documented(code, text, ranges)] == []
