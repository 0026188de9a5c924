"""kb/rocm_images and kb/rocm_install: every row sourced, and the values read from AMD's files.

Expected values are copied by hand from ROCm/ROCm-docker build_all.sh history and ROCm/rocm-install-on-linux
docs/conf.py (the commits named in the data), not read from the data under test.
"""

from __future__ import annotations

import json

import pytest

from gpudoctor.kb import rocm_images, rocm_install
from tests.helpers.fixtures import REPO

DATA = REPO / "gpudoctor" / "kb" / "data"


@pytest.mark.parametrize("filename", ["rocm_images.json", "rocm_install.json"])
def test_every_row_names_a_known_source(filename):
    data = json.loads((DATA / filename).read_text(encoding="utf-8"))
    rows = data.get("images") or data.get("releases")
    assert rows
    for row in rows:
        assert row["sources"] and all(s.split("@")[0] in data["sources"] for s in row["sources"]), row


@pytest.mark.parametrize(
    "reference",
    [
        "rocm/dev-ubuntu-22.04:6.1.2",
        "rocm/dev-ubuntu-22.04:5.7.1",
        "rocm/dev-ubuntu-24.04:6.2",
        "rocm/dev-ubuntu-24.04:6.4.1",
    ],
)
def test_images_amds_build_script_tags(reference):
    assert rocm_images.is_published_rocm_image(reference)


@pytest.mark.parametrize(
    "reference", ["rocm/dev-ubuntu-24.04:6.1.2", "rocm/dev-ubuntu-22.04:7.2", "rocm/pytorch:latest"]
)
def test_tags_not_in_the_sources_are_not_listed(reference):
    assert not rocm_images.is_published_rocm_image(reference)


def test_image_for_prefers_the_newest_patch_the_host_runs():
    assert rocm_images.image_for("6.1", "ubuntu22.04", "6.1.1").reference == "rocm/dev-ubuntu-22.04:6.1.1"
    assert rocm_images.image_for("6.1", "ubuntu22.04", "6.1.3").reference == "rocm/dev-ubuntu-22.04:6.1.2"
    assert rocm_images.image_for("6.1", "ubuntu24.04") is None  # no 24.04 image before 6.2
    assert rocm_images.image_for("junk", "ubuntu22.04") is None


def test_install_releases_and_amdgpu_install_urls():
    assert [r.rocm for r in rocm_install.rocm_releases()] == ["6.2.2", "6.2.1", "6.2"]
    latest = rocm_install.rocm_release(None)
    assert latest is not None and latest.amdgpu_install_version == "6.2.60202-1"
    assert rocm_install.amdgpu_install_url(latest, "ubuntu", "22.04") == (
        "https://repo.radeon.com/amdgpu-install/6.2.2/ubuntu/jammy/amdgpu-install_6.2.60202-1_all.deb"
    )
    assert rocm_install.amdgpu_install_url(latest, "rhel", "8.10") == (
        "https://repo.radeon.com/amdgpu-install/6.2.2/el/8.10/amdgpu-install-6.2.60202-1.el8.noarch.rpm"
    )
    assert rocm_install.amdgpu_install_url(latest, "sles", "15.6") == (
        "https://repo.radeon.com/amdgpu-install/6.2.2/sle/15.6/amdgpu-install-6.2.60202-1.noarch.rpm"
    )
    assert rocm_install.amdgpu_install_url(latest, "ubuntu", "20.04") is None
    assert rocm_install.rocm_release("6.1.2") is None


def test_signing_key_is_the_full_fingerprint_whose_long_id_the_2025_thread_shows():
    url, fingerprint = rocm_install.signing_key()
    assert url == "https://repo.radeon.com/rocm/rocm.gpg.key"
    assert fingerprint == "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C" and fingerprint.endswith("9386B48A1A693C5C")
