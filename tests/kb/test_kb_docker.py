"""The nvidia/cuda image table: tag spelling, which tags are published, and choosing a base image for a driver."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.kb import docker_images
from gpudoctor.kb.describe import render_kb_text
from gpudoctor.kb.docker_choice import choose_cuda_image
from gpudoctor.kb.docker_images import (
    CudaImage,
    image_tag,
    is_published,
    os_tokens,
    published_images,
)
from gpudoctor.kb.driver_cuda import max_cuda_for_driver
from gpudoctor.kb.errors import KnowledgeRefused
from tests.helpers.fixtures import REPO, load_script

DATA = json.loads((REPO / "gpudoctor" / "kb" / "data" / "docker_cuda.json").read_text(encoding="utf-8"))

# Real driver versions: R470's last, the 12.0 GA driver, 535 GA and Debian 12's packaged 535, the 12.4.1 driver,
# the 12.8 GA driver, R575, the 13.0.2 driver, R590.
DRIVERS = (
    "470.256.02",
    "525.60.13",
    "535.54.03",
    "535.309.01",
    "550.54.15",
    "570.86.10",
    "575.57.08",
    "580.95.05",
    "590.48.01",
)
CUDAS = (None, "12.1", "12.8", "13.0")
FLAVORS = ("base", "runtime", "devel")
OSES = (None, "ubuntu24.04", "ubuntu22.04", "ubi9", "rockylinux8", "amzn2023")


def _choose(**kwargs) -> CudaImage | KnowledgeRefused:
    try:
        return choose_cuda_image(**kwargs)
    except KnowledgeRefused as refusal:
        return refusal


# --------------------------------------------------------------------------- tags


@pytest.mark.parametrize(
    ("args", "tag"),
    [
        (("12.8.1", "runtime", "ubuntu24.04", True), "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"),
        (("12.8.1", "devel", "ubuntu22.04", False), "nvidia/cuda:12.8.1-devel-ubuntu22.04"),
        (("12.3.2", "runtime", "ubuntu22.04", True), "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04"),
        (("12.2.2", "devel", "ubuntu20.04", True), "nvidia/cuda:12.2.2-cudnn8-devel-ubuntu20.04"),
        (("11.8.0", "runtime", "ubi8", True), "nvidia/cuda:11.8.0-cudnn8-runtime-ubi8"),
        (("13.0.2", "base", "ubuntu24.04", False), "nvidia/cuda:13.0.2-base-ubuntu24.04"),
        (("13.0.2", "cudnn-runtime", "ubuntu24.04", False), "nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04"),
    ],
)
def test_image_tag_spells_the_cudnn_word_of_the_release(args, tag):
    assert image_tag(*args) == tag


@pytest.mark.parametrize(
    "args",
    [
        ("12.8", "runtime", "ubuntu24.04", False),  # no exact release
        ("12.8.1", "slim", "ubuntu24.04", False),
        ("12.8.1", "base", "ubuntu24.04", True),  # no cuDNN base image exists
        ("12.8.1", "runtime", "Ubuntu 24.04; rm -rf /", False),
        (None, None, None, None),
        (12.8, ["runtime"], {"os": 1}, "yes"),
    ],
)
def test_image_tag_gives_none_for_junk(args):
    assert image_tag(*args) is None


def test_every_row_tag_parses_back_to_its_row():
    images = docker_images._all_images()
    assert len(images) > 300
    for image in images:
        short = image.tag.split(":", 1)[1]
        match = docker_images._TAG_RE.fullmatch(short)
        assert match, image.tag
        assert match.group(1) == image.cuda and match.group(4) == image.os and match.group(3) == image.flavor
        assert image_tag(image.cuda, image.flavor, image.os, image.cudnn) == image.tag
    assert {row["cuda"] for row in DATA["rows"]} == {image.cuda for image in images}


@pytest.mark.parametrize(
    "tag",
    [
        "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04",
        "12.8.1-cudnn-runtime-ubuntu24.04",
        "nvcr.io/nvidia/cuda:13.0.2-devel-ubi9",
        "nvidia/cuda:12.2.2-cudnn8-devel-ubuntu22.04",
        "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu20.04",
        "nvidia/cuda:13.1.0-base-amzn2023",
        "nvidia/cuda:13.2.1-cudnn-devel-ubuntu24.04",
    ],
)
def test_known_tags_are_published(tag):
    assert is_published(tag)


@pytest.mark.parametrize(
    "tag",
    [
        "nvidia/cuda:12.8.0-runtime-ubuntu24.04",  # superseded by 12.8.1, deleted
        "nvidia/cuda:13.1.0-cudnn-runtime-ubuntu24.04",  # no cuDNN images for 13.1.0
        "nvidia/cuda:12.5.1-cudnn-runtime-ubuntu24.04",  # 12.5.1 on 24.04 has no cuDNN image
        "nvidia/cuda:12.8.1-cudnn-runtime-amzn2023",  # no cuDNN on Amazon Linux
        "nvidia/cuda:12.4.1-runtime-ubuntu24.04",  # 24.04 images start at 12.5.1
        "nvidia/cuda:12.2.2-cudnn-runtime-ubuntu22.04",  # the word is cudnn8 there
        "nvidia/cuda:13.3.1-cudnn-runtime-ubuntu24.04",  # secondary only
        "nvidia/cuda:13.2.1-runtime-ubuntu24.04",  # secondary only (seen pinned, not in NVIDIA's list)
        "nvidia/cuda:latest",
        "ubuntu:24.04",
        "",
        None,
        12.8,
        "nvidia/cuda:12.8.1-runtime-ubuntu24.04 ",
    ],
)
def test_unknown_and_secondary_tags_are_not_published(tag):
    assert is_published(tag) is (isinstance(tag, str) and tag.strip() == "nvidia/cuda:12.8.1-runtime-ubuntu24.04")


def test_published_images_hold_only_published_rows():
    images = published_images()
    assert images and all(image.confidence == "published" and is_published(image.tag) for image in images)
    secondary = [image for image in docker_images._all_images() if image.confidence == "secondary"]
    assert secondary and not any(is_published(image.tag) for image in secondary)
    assert {"ubuntu24.04", "ubuntu22.04", "ubi9", "amzn2023", "ubuntu26.04"} <= set(os_tokens())


# --------------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("driver", "cuda", "cudnn", "tag", "compat"),
    [
        ("470.256.02", None, False, "nvidia/cuda:11.8.0-runtime-ubuntu22.04", "minor_version_compat"),
        ("525.60.13", None, True, "nvidia/cuda:12.0.1-cudnn8-runtime-ubuntu22.04", "minor_version_compat"),
        ("535.309.01", None, False, "nvidia/cuda:12.2.2-runtime-ubuntu22.04", "native"),
        ("535.309.01", "12.1", True, "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "native"),
        ("535.309.01", "12.8", False, "nvidia/cuda:12.8.1-runtime-ubuntu24.04", "minor_version_compat"),
        ("550.54.15", None, True, "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "native"),
        ("570.86.10", "12.8", True, "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04", "minor_version_compat"),
        ("575.57.08", None, False, "nvidia/cuda:12.9.1-runtime-ubuntu24.04", "native"),
        ("580.95.05", "13.0", True, "nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04", "native"),
        ("590.48.01", None, False, "nvidia/cuda:13.1.0-runtime-ubuntu24.04", "native"),
        ("590.48.01", None, True, "nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04", "native"),  # no 13.1 cuDNN runtime
        (None, "12.8", False, "nvidia/cuda:12.8.1-runtime-ubuntu24.04", None),
    ],
)
def test_choose_for_real_drivers(driver, cuda, cudnn, tag, compat):
    image = choose_cuda_image(driver_version=driver, cuda=cuda, cudnn=cudnn)
    assert (image.tag, image.compat) == (tag, compat)
    assert image.why and image.cuda in image.why


def test_minor_version_compat_beyond_the_drivers_cuda_says_runtime_only():
    image = choose_cuda_image(driver_version="535.309.01", cuda="12.8")
    assert "minor-version compatibility" in image.why and "runtime" in image.why
    assert "NVIDIA_REQUIRE_CUDA" in image.why and ">= 570.124.06" in image.why


def test_exact_patch_and_flavors():
    assert (
        choose_cuda_image(driver_version="580.95.05", cuda="12.6.3", flavor="devel").tag
        == "nvidia/cuda:12.6.3-devel-ubuntu24.04"
    )
    assert (
        choose_cuda_image(driver_version="580.95.05", cuda="12.8", flavor="base").tag
        == "nvidia/cuda:12.8.1-base-ubuntu24.04"
    )
    assert (
        choose_cuda_image(driver_version="580.95.05", cuda="cu128", flavor="cudnn-devel").tag
        == "nvidia/cuda:12.8.1-cudnn-devel-ubuntu24.04"
    )


def test_os_given_absent_and_falling_back():
    assert (
        choose_cuda_image(driver_version="580.95.05", cuda="13.0", os="ubi9").tag == "nvidia/cuda:13.0.2-runtime-ubi9"
    )
    assert (
        choose_cuda_image(driver_version="580.95.05", cuda="13.0", os=" Ubuntu-22.04 ").tag
        == "nvidia/cuda:13.0.2-runtime-ubuntu22.04"
    )
    # 12.5.1 has no cuDNN image on 24.04: the default falls back to 22.04.
    image = choose_cuda_image(driver_version="580.95.05", cuda="12.5", cudnn=True)
    assert image.tag == "nvidia/cuda:12.5.1-cudnn-runtime-ubuntu22.04" and "ubuntu22.04" in image.why


@pytest.mark.parametrize(
    ("kwargs", "reason", "nearest"),
    [
        ({"driver_version": "580.95.05", "cuda": "13.0", "os": "windows11"}, "unknown base OS", "ubuntu24.04"),
        ({"driver_version": "580.95.05", "cuda": "12.4", "os": "ubuntu24.04"}, "on ubuntu24.04", "ubuntu22.04"),
        (
            {"driver_version": "580.95.05", "cuda": "13.0", "os": "amzn2023", "cudnn": True},
            "on amzn2023",
            "ubuntu24.04",
        ),
        ({"driver_version": "590.48.01", "cuda": "13.1", "cudnn": True}, "no published", "13.0.2-cudnn-runtime"),
        ({"driver_version": "535.309.01", "cuda": "13.0"}, "too old", "12.2.2-runtime-ubuntu22.04"),
        ({"driver_version": "535.309.01", "cuda": "13.0"}, "too old", "upgrade the driver to >= 580.95.05"),
        ({"driver_version": "570.86.10", "cuda": "13.0", "cudnn": True}, "too old", "12.8.1-cudnn-runtime-ubuntu24.04"),
        ({"driver_version": "580.95.05", "cuda": "13.3"}, "no published", "13.1.0-runtime-ubuntu24.04"),
        ({"driver_version": "580.95.05", "cuda": "12.7"}, "no published", "12.6.3-runtime-ubuntu24.04"),
        ({"driver_version": "580.95.05", "cuda": "12.8", "flavor": "base", "cudnn": True}, "base", "cudnn-runtime"),
        ({"driver_version": "580.95.05", "cuda": "12.8", "flavor": "slim"}, "flavor", "runtime"),
    ],
)
def test_refusals_carry_the_nearest(kwargs, reason, nearest):
    with pytest.raises(KnowledgeRefused) as caught:
        choose_cuda_image(**kwargs)
    assert reason in caught.value.reason and caught.value.nearest and nearest in caught.value.nearest


def test_a_driver_older_than_every_image_is_refused_with_the_upgrade():
    with pytest.raises(KnowledgeRefused) as caught:
        choose_cuda_image(driver_version="440.33.01", cuda=None)
    assert "too old" in caught.value.reason and "upgrade the driver" in caught.value.nearest


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("cuda", CUDAS)
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("cudnn", (False, True))
@pytest.mark.parametrize("os", OSES)
def test_every_choice_is_published_and_runs_on_the_driver(driver, cuda, flavor, cudnn, os):
    result = _choose(driver_version=driver, cuda=cuda, flavor=flavor, cudnn=cudnn, os=os)
    if isinstance(result, KnowledgeRefused):
        assert result.reason
        return
    assert is_published(result.tag) and result.confidence == "published"
    assert (result.flavor, result.cudnn) == (flavor, cudnn)
    assert os is None or result.os == os
    if cuda is not None:
        assert result.cuda.startswith(cuda + ".")
    assert result.compat in ("native", "minor_version_compat")
    # Never a newer CUDA major than the driver runs, and the newest native one when none is asked.
    limit = max_cuda_for_driver(driver)
    assert int(result.cuda.split(".")[0]) <= int(limit.split(".")[0])


@settings(max_examples=300, deadline=None)
@given(
    driver=st.one_of(st.none(), st.sampled_from(DRIVERS), st.text(max_size=12), st.integers(), st.floats()),
    cuda=st.one_of(st.none(), st.sampled_from(CUDAS + ("12.8.1", "cu130", "11.8")), st.text(max_size=8), st.integers()),
    flavor=st.one_of(st.sampled_from(FLAVORS + ("cudnn-devel",)), st.text(max_size=10), st.none()),
    cudnn=st.one_of(st.booleans(), st.none(), st.text(max_size=3)),
    os=st.one_of(st.none(), st.sampled_from(OSES[1:]), st.text(max_size=14), st.integers()),
)
def test_junk_in_gives_a_refusal_or_a_published_image(driver, cuda, flavor, cudnn, os):
    result = _choose(driver_version=driver, cuda=cuda, flavor=flavor, cudnn=cudnn, os=os)
    if isinstance(result, CudaImage):
        assert is_published(result.tag)
    else:
        assert isinstance(result.reason, str) and result.reason


# --------------------------------------------------------------------------- data, view, validation


def test_rows_are_one_per_exact_release_with_the_right_cudnn_word():
    versions = [row["cuda"] for row in DATA["rows"]]
    assert len(versions) == len(set(versions))
    words = {row["cuda"]: row["cudnn"] for row in DATA["rows"]}
    assert (words["12.2.2"], words["12.3.2"], words["12.8.1"], words["13.1.0"]) == ("cudnn8", "cudnn9", "cudnn", None)
    assert {row["cuda"] for row in DATA["rows"] if row["confidence"] == "secondary"} >= {"13.3.1", "13.4.1"}


def test_kb_docker_topic_prints_the_table_with_sources():
    text = render_kb_text(topic="docker")
    assert "12.8.1  published" in text and "SECONDARY" in text
    assert "[DOCK_TAGS]" in text and "[DOCK_PINS] (secondary)" in text
    assert render_kb_text(topic="images") == text


def test_kb_validate_checks_the_docker_file(tmp_path):
    import shutil

    kb_validate = load_script("kb_validate")
    assert kb_validate.validate() == []
    target = tmp_path / "data"
    shutil.copytree(REPO / "gpudoctor" / "kb" / "data", target)
    data = json.loads((target / "docker_cuda.json").read_text(encoding="utf-8"))
    data["rows"][0]["flavors"].append("cudnn8-runtime")
    data["rows"][1]["confidence"] = "maybe"
    data["rows"][2]["cuda"] = "13.3"
    (target / "docker_cuda.json").write_text(json.dumps(data), encoding="utf-8")
    errors = kb_validate.validate(target)
    assert any("cuDNN token" in e for e in errors)
    assert any("confidence" in e for e in errors)
    assert any("exact x.y.z" in e for e in errors)
