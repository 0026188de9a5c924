"""The manifests' tiny YAML writer and the value checks of `fleet k8s`: properties over arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.errors import UsageError
from gpudoctor.generate.k8s_inputs import checked_image, checked_namespace, checked_runtime_class
from gpudoctor.generate.k8s_yaml import to_yaml, to_yaml_stream

yaml = pytest.importorskip("yaml", reason="PyYAML (a test dependency) reads the YAML back")

# Lone surrogates are no text (UTF-8 cannot hold them): everything else, controls and line separators included.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**63) | TEXT
TREES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, TREES, max_size=5))
def test_any_tree_reads_back_as_itself(tree):
    assert yaml.safe_load(to_yaml(tree)) == tree


@settings(max_examples=50, deadline=None)
@given(st.lists(st.dictionaries(TEXT, TREES, min_size=1, max_size=3), min_size=1, max_size=3))
def test_a_stream_reads_back_document_by_document(documents):
    assert list(yaml.safe_load_all(to_yaml_stream(documents))) == documents


def test_output_is_printable_ascii_lines():
    text = to_yaml({"k": "a\u2028b\x85c\U0001f600\n- x: y", "n": [1, True, None, {}, []]})
    assert text.isascii() and all(line.isprintable() for line in text.splitlines())


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_value_checks_accept_or_refuse_in_one_line_never_crash(value):
    for check in (checked_image, checked_namespace, checked_runtime_class):
        try:
            accepted = check(value)
        except UsageError as error:
            assert "\n" not in str(error)
        else:
            assert accepted == value and value.isascii() and value.isprintable() and " " not in value
