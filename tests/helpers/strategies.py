"""Hypothesis strategies shared by the parser tests.

Every parser in ``gpudoctor.facts`` must answer "unknown" for input it cannot
read, never raise.  The unit tests prove that with the same few kinds of
damaged input, kept here once:

- ``json_like()``: any JSON-shaped value, as a damaged snapshot may hold one;
  ``non_text_json()``: the same without bare strings (the text parsers read
  any other value as "unknown");
- ``mutated_json(value)``: a JSON record with keys dropped, items removed,
  text cut and leaves swapped for arbitrary JSON;
- ``line_mutations(text)``: a text truncated anywhere, with lines dropped,
  duplicated or reordered;
- ``mutated(texts, names, ...)``: one of several real captures after up to
  three random cuts, line deletions or duplications, or character
  replacements; its repr names the recipe instead of the whole text;
- ``any_code_points()`` and ``decoded_bytes()``: text no keyboard types, lone
  surrogates and U+FFFD replacement characters included.

``fixture_named(files, name_part)`` picks one real capture to mutate or
assert on, and skips the test where the corpus lacks it.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import pytest
from hypothesis import strategies as st

__all__ = [
    "Mutated",
    "any_code_points",
    "decoded_bytes",
    "fixture_named",
    "json_like",
    "line_mutations",
    "mutated",
    "mutated_json",
    "non_text_json",
]

_JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def json_like() -> st.SearchStrategy[object]:
    """Any JSON-shaped value: None, bools, ints, floats (NaN and infinities too), text, lists and dicts of them."""
    return _JSON_LIKE


def non_text_json() -> st.SearchStrategy[object]:
    """``json_like()`` without a bare string at the top: a value that is no text to parse at all."""
    return _JSON_LIKE.filter(lambda value: not isinstance(value, str))


@st.composite
def mutated_json(draw: st.DrawFn, value: object) -> object:
    """The value with keys dropped, items removed, text cut and leaves replaced by arbitrary JSON.

    Pass a deep copy where the value is shared: the result may hold parts of it.
    """
    if draw(st.integers(0, 9)) == 0:
        return draw(_JSON_LIKE)
    if isinstance(value, dict):
        return {key: draw(mutated_json(item)) for key, item in value.items() if draw(st.integers(0, 4)) != 0}
    if isinstance(value, list):
        return [draw(mutated_json(item)) for item in value if draw(st.integers(0, 4)) != 0]
    if isinstance(value, str) and draw(st.booleans()):
        return value[: draw(st.integers(0, len(value)))]  # truncated text, e.g. a cut-off version.json
    return value


def line_mutations(text: str) -> st.SearchStrategy[str]:
    """The text truncated anywhere, with lines dropped, duplicated or reordered."""
    lines = text.splitlines(keepends=True)
    n = len(lines)
    return st.one_of(
        st.integers(0, len(text)).map(lambda cut: text[:cut]),
        st.lists(st.booleans(), min_size=n, max_size=n).map(
            lambda keep: "".join(line for line, k in zip(lines, keep) if k)
        ),
        st.lists(st.integers(1, 3), min_size=n, max_size=n).map(
            lambda times: "".join(line * t for line, t in zip(lines, times))
        ),
        st.permutations(lines).map("".join),
    )


class Mutated(str):
    """A mutated capture whose repr names the recipe, not the whole (often 200 kB) text."""

    recipe: str

    def __repr__(self) -> str:
        return f"<{self.recipe}>"


_MUTATIONS = ["slice", "truncate", "delete_lines", "duplicate_lines", "replace"]


@st.composite
def mutated(
    draw: st.DrawFn, texts: Sequence[str], names: Sequence[str], *, noise_alphabet: str, max_lines: int = 6
) -> Mutated:
    """One of ``texts`` after up to three random cuts, line deletions or duplications, or replacements.

    ``names`` name the texts in the recipe; a line edit touches at most ``max_lines``
    lines; a replacement puts short runs of ``noise_alphabet`` (or of any text) in
    place of single characters.  ``texts`` may be empty where the test is skipped.
    """
    noise = st.text(alphabet=noise_alphabet, min_size=1, max_size=8) | st.text(max_size=4)
    position = draw(st.integers(0, len(texts) - 1))
    text, recipe = texts[position], [names[position]]
    for _ in range(draw(st.integers(1, 3))):
        mutation = draw(st.sampled_from(_MUTATIONS))
        if mutation in ("slice", "truncate"):
            end = draw(st.integers(0, len(text)))
            start = draw(st.integers(0, end)) if mutation == "slice" else 0
            text = text[start:end]
            recipe.append(f"[{start}:{end}]")
        elif mutation in ("delete_lines", "duplicate_lines"):
            lines = text.splitlines(keepends=True)
            if lines:
                at = draw(st.integers(0, len(lines) - 1))
                count = draw(st.integers(1, max_lines))
                chunk = lines[at : at + count]
                lines[at : at + count] = [] if mutation == "delete_lines" else chunk * 2
                text = "".join(lines)
                recipe.append(f"{mutation}({at}, {count})")
        else:
            for _ in range(draw(st.integers(1, 10))):
                if not text:
                    break
                at = draw(st.integers(0, len(text) - 1))
                replacement = draw(noise)
                text = text[:at] + replacement + text[at + 1 :]
                recipe.append(f"replace({at}, {replacement!r})")
    result = Mutated(text)
    result.recipe = " ".join(recipe)
    return result


def any_code_points() -> st.SearchStrategy[str]:
    """Text of any code points, lone surrogates too, as text decoded with errors="surrogateescape" holds them."""
    return st.text(alphabet=st.characters(blacklist_categories=()))


def decoded_bytes() -> st.SearchStrategy[str]:
    """Arbitrary bytes read the way the tool reads a file: UTF-8 with errors replaced."""
    return st.binary().map(lambda data: data.decode("utf-8", errors="replace"))


def fixture_named(files: Sequence[pathlib.Path], name_part: str) -> pathlib.Path:
    """The first of ``files`` whose name holds ``name_part``; the calling test skips where there is none."""
    matches = [path for path in files if name_part in path.name]
    if not matches:
        pytest.skip(f"fixture *{name_part}* not available")
    return matches[0]
