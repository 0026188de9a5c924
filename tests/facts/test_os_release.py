"""os_release: /etc/os-release, this machine's and hand-made edge cases."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.model import OsRelease
from gpudoctor.facts.os_release import parse_os_release, parse_os_release_fields
from tests.helpers.strategies import line_mutations, non_text_json

# Written from the os-release(5) specification, not captured: comments, both quote
# styles, an escape, an unquoted value and an empty one.
SYNTHETIC_UBUNTU = """\
# a comment line
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME='Ubuntu'
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy \\"Jellyfish\\")"
ID=ubuntu
ID_LIKE="debian  ubuntu-core"
VARIANT=
not a key value line
"""


def _live_text() -> str:
    for path in (pathlib.Path("/etc/os-release"), pathlib.Path("/usr/lib/os-release")):
        if path.is_file():
            return path.read_text(errors="replace")
    pytest.skip("no os-release here")


def test_synthetic_ubuntu() -> None:
    release = parse_os_release(SYNTHETIC_UBUNTU)
    assert release == OsRelease(
        id="ubuntu", version_id="22.04", pretty_name="Ubuntu 22.04.4 LTS", id_like=("debian", "ubuntu-core")
    )
    fields = parse_os_release_fields(SYNTHETIC_UBUNTU)
    assert fields["NAME"] == "Ubuntu"
    assert fields["VERSION"] == '22.04.4 LTS (Jammy "Jellyfish")'
    assert fields["VARIANT"] == ""


def test_live_os_release() -> None:
    text = _live_text()
    release = parse_os_release(text)
    assert release.id is not None and " " not in release.id and '"' not in release.id
    if release.id == "debian" and 'VERSION_ID="12"' in text:  # this development machine
        assert release == OsRelease(
            id="debian", version_id="12", pretty_name="Debian GNU/Linux 12 (bookworm)", id_like=()
        )


def test_unterminated_quote_keeps_the_value() -> None:
    assert parse_os_release('ID="rhel\nVERSION_ID=9.3\n').id == "rhel"


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "ID=\n", 'ID=""\n'])
def test_unknown(text: str) -> None:
    assert parse_os_release(text) == OsRelease()


@given(st.text())
def test_any_text(text: str) -> None:
    release = parse_os_release(text)
    assert isinstance(release, OsRelease) and isinstance(release.id_like, tuple)
    assert all(isinstance(item, str) and item for item in release.id_like)


@given(non_text_json())
def test_any_json_value_is_unknown_not_an_error(value: object) -> None:
    assert parse_os_release(value) == OsRelease()


@given(data=st.data())
def test_mutated_inputs_never_raise(data: st.DataObject) -> None:
    for text in (SYNTHETIC_UBUNTU, _live_text()):
        assert isinstance(parse_os_release(data.draw(line_mutations(text))), OsRelease)


_VALUE = st.from_regex(r"[A-Za-z0-9 ._()-]{1,20}", fullmatch=True).filter(lambda v: v.strip() == v)


@given(id_=st.from_regex(r"[a-z0-9._-]{1,12}", fullmatch=True), version=_VALUE, quote=st.sampled_from(['"', "'", ""]))
def test_generated_files_round_trip(id_: str, version: str, quote: str) -> None:
    if not quote and " " in version:
        version = version.replace(" ", "_")
    release = parse_os_release(f"ID={id_}\nVERSION_ID={quote}{version}{quote}\n")
    assert (release.id, release.version_id) == (id_, version)
