"""Reading a file source live: its text as it is, the os-release(5) fallback, and a missing file as evidence."""

from __future__ import annotations

from gpudoctor.evidence.collect import collect_source
from gpudoctor.evidence.sources import Source, source_by_name


def test_os_release_is_read_from_etc_then_usr_lib_as_the_specification_asks(tmp_path):
    etc, usr_lib = tmp_path / "etc-os-release", tmp_path / "usr-lib-os-release"
    source = Source("os-release", "file", "the distribution", path=str(etc), fallback_path=str(usr_lib))
    usr_lib.write_text('ID=debian\nVERSION_ID="12"\n')
    assert collect_source(source, timeout=1).text == 'ID=debian\nVERSION_ID="12"\n'
    etc.write_text("ID=ubuntu\n")  # /etc/os-release, when there, is the only one read
    assert collect_source(source, timeout=1).text == "ID=ubuntu\n"


def test_a_missing_file_is_an_error_naming_the_path_it_looked_for(tmp_path):
    source = Source("os-release", "file", "x", path=str(tmp_path / "a"), fallback_path=str(tmp_path / "b"))
    item = collect_source(source, timeout=1)
    assert item.text is None and item.error == f"{tmp_path / 'a'} does not exist"


def test_the_live_os_release_source_falls_back_to_usr_lib():
    source = source_by_name("os-release")
    assert source is not None
    assert (source.path, source.fallback_path) == ("/etc/os-release", "/usr/lib/os-release")
