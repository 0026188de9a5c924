"""The cloud GPU instance table (kb/data/cloud_instances.json) and its ``gpudoctor kb instances`` view.

The table is real data read from the providers' pages (a source on every row); these tests check its shape and
the lookups on it, never a copy of its values: where a value is asserted it is one the cited page states.
"""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.errors import InputError
from gpudoctor.kb import cloud_instances as ci
from gpudoctor.kb.describe_instances import describe_instances
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import _load
from tests.helpers.strategies import any_code_points, json_like

DATA = _load(ci.DATA_FILE)


# --------------------------------------------------------------------------- the data


def test_meta_has_a_date_and_sources_with_urls() -> None:
    datetime.date.fromisoformat(str(DATA["as_of"]))
    assert DATA["sources"]
    for key, source in DATA["sources"].items():
        assert re.fullmatch(r"[A-Z0-9_]+", key)
        assert str(source["url"]).startswith("https://"), key
        assert source["title"]


def test_every_row_parses_and_has_a_source_url_and_sane_values() -> None:
    raw = DATA["instances"]
    rows = ci.instance_types()
    assert len(rows) == len(raw), "a row of the data file does not parse"
    seen = set()
    for row, entry in zip(rows, raw, strict=True):
        assert row.provider in ci.PROVIDERS
        assert row.source.startswith("https://"), row.name
        assert set(entry["sources"]) <= set(DATA["sources"]), row.name
        assert 0 < row.gpu_count <= 16, row.name
        assert row.gpu_memory_gib is None or 1 <= row.gpu_memory_gib <= 300, row.name  # B300: 268.6 GiB
        assert row.gpu_vendor in ("nvidia", "amd"), row.name
        assert ("×" in row.expected) != row.is_fractional, row.name
        assert (row.provider, row.name.lower()) not in seen, f"duplicate row {row.name}"
        seen.add((row.provider, row.name.lower()))


def test_rows_per_provider() -> None:
    counts = {p: len(ci.instance_types(p)) for p in ci.PROVIDERS}
    assert counts["aws"] >= 60 and counts["azure"] >= 20 and counts["gcp"] >= 30
    assert counts["oci"] == 0 and counts["lambda"] == 0  # only name rules: no row was sourced from their pages


def test_secondary_sources_are_marked_and_every_row_has_a_primary_one() -> None:
    # a row may lean on a secondary source (a gist, machine-translated copies) only beside a provider's own
    secondary = {key for key, source in DATA["sources"].items() if source.get("secondary")}
    assert "AWS_GIST_GPUS" in secondary and "AWS_KARPENTER" not in secondary
    for entry in DATA["instances"]:
        assert set(entry["sources"]) - secondary, entry["name"]


def test_rows_read_from_the_generated_ec2_table() -> None:
    # values the Karpenter table (EC2 DescribeInstanceTypes) states: GPU count, MiB per GPU, baseline Mbps, EFAs
    p5 = ci.instance_type("aws", "p5.48xlarge")
    assert p5 is not None and p5.expected == "8× NVIDIA H100 80 GB"  # 81920 MiB
    assert p5.network == "3200 Gbps baseline, 32 EFA interfaces"
    assert ci.instance_type("aws", "p5.4xlarge").expected == "1× NVIDIA H100 80 GB"  # type: ignore[union-attr]
    assert ci.instance_type("aws", "p5en.48xlarge").expected == "8× NVIDIA H200 141 GB"  # type: ignore[union-attr]
    assert ci.instance_type("aws", "g6e.12xlarge").expected == "4× NVIDIA L40S 44.7 GB"  # type: ignore[union-attr]
    assert ci.instance_type("aws", "g6.48xlarge").gpu_count == 8  # type: ignore[union-attr]
    # P4d's per-GPU memory, missing before: 40960 MiB in the EC2 API
    assert ci.instance_type("aws", "p4d.24xlarge").gpu_memory_gib == 40  # type: ignore[union-attr]
    # the DLAMI family lists reach the new rows
    g6e = ci.instance_type("aws", "g6e.xlarge")
    assert g6e is not None and "Deep Learning Base AMI with Single CUDA (Ubuntu 24.04)" in g6e.driver_images


@pytest.mark.parametrize(
    ("name", "count", "model"),
    [  # the Cluster Toolkit's machine-type map: GPUs fixed to each type
        ("a2-highgpu-1g", 1, "NVIDIA A100 40GB"),
        ("a2-megagpu-16g", 16, "NVIDIA A100 40GB"),
        ("a2-ultragpu-8g", 8, "NVIDIA A100 80GB"),
        ("a3-highgpu-4g", 4, "NVIDIA H100 80GB"),
        ("a3-megagpu-8g", 8, "NVIDIA H100 80GB"),
        ("a3-ultragpu-8g", 8, "NVIDIA H200 141GB"),
        ("a4-highgpu-8g", 8, "NVIDIA B200"),
        ("a4x-highgpu-4g", 4, "NVIDIA GB200"),
        ("g2-standard-24", 2, "NVIDIA L4"),
        ("g2-standard-32", 1, "NVIDIA L4"),  # more vCPUs, still one L4: the name does not say the count
        ("g4-standard-384", 8, "NVIDIA RTX PRO 6000"),
    ],
)
def test_google_cloud_types_carry_their_fixed_gpus(name: str, count: int, model: str) -> None:
    row = ci.instance_type("gcp", name)
    assert row is not None and row.gpu_count == count and row.gpu_model == model


def test_images_and_series_cite_their_pages() -> None:
    for entry in DATA["images"] + DATA["series"]:
        assert str(entry["source"]).startswith("https://")
        assert entry["provider"] in ci.PROVIDERS
    for provider, rules in DATA["families"].items():
        assert provider in ci.PROVIDERS and str(rules["source"]).startswith("https://")


# --------------------------------------------------------------------------- lookups


def test_lookup_ignores_case_and_surrounding_space() -> None:
    row = ci.instance_type("aws", "  G5.XLarge \n")
    assert row is not None and row.name == "g5.xlarge"
    assert ci.instance_type(" AWS ", "g5.xlarge") is row
    assert ci.instance_type("gcp", "g5.xlarge") is None  # another provider's name
    assert ci.instance_type("aws", "g5.xlarge.extra") is None


def test_azure_names_with_or_without_standard_prefix() -> None:
    full = ci.instance_type("azure", "Standard_ND96asr_v4")
    assert full is not None
    assert ci.instance_type("azure", "nd96asr_v4") is full
    assert ci.instance_type("azure", "STANDARD_ND96ASR_V4") is full
    assert ci.instance_type("aws", "Standard_ND96asr_v4") is None


def test_expected_text_whole_gpus_and_a_vgpu_share() -> None:
    # values the cited pages state: G5 = A10G with 24 GiB per GPU, NV6ads_A10_v5 = 1/6 of an A10 with 4 GB
    assert ci.instance_type("aws", "g5.xlarge").expected == "1× NVIDIA A10G 24 GB"  # type: ignore[union-attr]
    assert ci.instance_type("aws", "g5.48xlarge").expected == "8× NVIDIA A10G 24 GB"  # type: ignore[union-attr]
    share = ci.instance_type("azure", "Standard_NV6ads_A10_v5")
    assert share is not None and share.expected == "1/6 of an NVIDIA A10 (4 GB)"
    assert share.gpu_count < 1 and share.is_fractional and share.whole_gpus == 1
    # the memory is not said twice when the model's name carries it
    assert ci.instance_type("gcp", "a3-highgpu-8g").expected == "8× NVIDIA H100 80GB"  # type: ignore[union-attr]


def test_images_follow_the_family_lists_of_the_dlami_pages() -> None:
    g5 = ci.instance_type("aws", "g5.xlarge")
    assert g5 is not None and "Deep Learning Base AMI with Single CUDA (Ubuntu 24.04)" in g5.driver_images
    g5g = ci.instance_type("aws", "g5g.xlarge")
    assert g5g is not None and g5g.driver_images == (
        "Deep Learning ARM64 Base OSS Nvidia Driver GPU AMI (Ubuntu 24.04)",
    )
    assert ci.instance_type("aws", "p3.2xlarge").driver_images == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("provider", "name", "verdict"),
    [
        ("aws", "p4d.24xlarge", True),  # a row
        ("aws", "g6.xlarge", True),  # a GPU family without a row
        ("aws", "p5.48xlarge", True),
        ("aws", "dl1.24xlarge", True),
        ("aws", "m5.large", False),
        ("aws", "c7g.xlarge", False),
        ("aws", "t3.micro", False),
        ("aws", "inf2.xlarge", False),  # Inferentia: accelerators, not GPUs
        ("aws", "trn1.32xlarge", False),
        ("aws", "f1.2xlarge", False),
        ("aws", "qq9.large", None),
        ("gcp", "a2-highgpu-1g", True),
        ("gcp", "g2-standard-4", True),
        ("gcp", "n1-standard-8", None),  # GPUs are attached at creation: the type alone does not say
        ("gcp", "n2-standard-8", False),
        ("gcp", "g1-small", False),
        ("gcp", "e2-medium", False),
        ("azure", "Standard_NC4as_T4_v3", True),
        ("azure", "NC999_future_v9", True),
        ("azure", "Standard_D4s_v5", False),
        ("azure", "Standard_E8as_v5", False),
        ("oci", "BM.GPU.H100.8", True),
        ("oci", "VM.GPU.A10.1", True),
        ("oci", "BM.GPU4.8", True),
        ("oci", "VM.Standard.E4.Flex", False),
        ("lambda", "gpu_1x_a10", True),
        ("nowhere", "g5.xlarge", None),
        ("aws", "", None),
    ],
)
def test_has_gpus(provider: str, name: str, verdict: bool | None) -> None:
    assert ci.has_gpus(provider, name) is verdict


def test_accelerator_note_and_n1_attach() -> None:
    assert "Inferentia" in (ci.accelerator_note("aws", "inf2.xlarge") or "")
    assert ci.accelerator_note("aws", "g5.xlarge") is None
    assert ci.gpus_attachable("gcp", "n1-standard-4") and not ci.gpus_attachable("gcp", "n2-standard-4")


def test_suggestions_come_from_the_table() -> None:
    for provider in ("aws", "azure", "gcp"):
        lines = ci.gpu_type_suggestions(provider)
        assert 3 <= len(lines) <= 6, provider
        labels = {str(s["label"]) for s in ci.series(provider)}
        for line in lines:
            name, _, rest = line.partition(": ")
            row = ci.instance_type(provider, name)
            if row is not None:
                assert rest == row.expected  # the row's own text
            else:
                assert name.split(" (")[0] in labels, line
    aws = ci.gpu_type_suggestions("aws")
    assert all(ci.instance_type("aws", line.split(":")[0]).gpu_count == 1 for line in aws)  # type: ignore[union-attr]
    assert not any(line.startswith("g5g.") for line in aws)  # an Arm host is no drop-in suggestion
    assert any("N1" in line and "attached" in line for line in ci.gpu_type_suggestions("gcp"))
    assert ci.gpu_type_suggestions("nowhere") == ()


def test_no_provider_page_states_a_host_link() -> None:
    assert all(row.host_link is None for row in ci.instance_types())


def test_expected_host_link_is_the_gpus_own_and_says_so() -> None:
    # the L4's spec sheet (kb/data/gpu_specs.json) gives PCIe Gen4 x16; the text says it is the GPU's, not the VM's
    link = ci.expected_host_link("aws", "g6.xlarge")
    assert link is not None and link.startswith("PCIe Gen4 x16") and "the NVIDIA L4's own link" in link
    assert "does not state the VM's" in link
    assert (ci.expected_host_link("aws", "p5e.48xlarge") or "").startswith("PCIe Gen5 x16")  # H200
    assert (ci.expected_host_link("gcp", "g2-standard-4") or "").startswith("PCIe Gen4 x16")
    # "NVIDIA A100" may be SXM4 or PCIe and "NVIDIA A10G" is not in the spec table: no guess
    assert ci.expected_host_link("aws", "p4d.24xlarge") is None
    assert ci.expected_host_link("aws", "g5.xlarge") is None
    # a vGPU share sees a virtual device: its link is not the GPU's
    assert ci.expected_host_link("azure", "Standard_NV6ads_A10_v5") is None
    assert (ci.expected_host_link("azure", "Standard_NV36ads_A10_v5") or "").startswith("PCIe Gen4 x16")
    assert ci.expected_host_link("aws", "nope") is None


@given(provider=st.sampled_from(ci.PROVIDERS) | any_code_points(), name=any_code_points())
def test_lookups_never_raise_on_any_text(provider: str, name: str) -> None:
    ci.instance_type(provider, name)
    assert ci.has_gpus(provider, name) in (True, False, None)
    ci.accelerator_note(provider, name)
    ci.gpus_attachable(provider, name)
    ci.expected_host_link(provider, name)
    ci.gpu_type_suggestions(provider)


@given(provider=json_like(), name=json_like())
def test_lookups_never_raise_on_junk_values(provider: object, name: object) -> None:
    assert ci.instance_type(provider, name) is None or isinstance(provider, str)  # type: ignore[arg-type]
    assert ci.has_gpus(provider, name) in (True, False, None)  # type: ignore[arg-type]
    ci.gpu_type_suggestions(provider)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- gpudoctor kb instances


def test_describe_one_type() -> None:
    text = "\n".join(describe_instances("p4d.24xlarge"))
    # the EC2 page: 8 GPUs (A100), NVSwitch, 4x 100 Gigabit with EFA
    assert "AWS p4d.24xlarge: 8× NVIDIA A100" in text
    assert "NVSwitch" in text and "EFA" in text
    assert "source:" in text and "github.com/awsdocs/amazon-ec2-user-guide" in text


def test_describe_one_type_with_provider_and_short_azure_name() -> None:
    text = "\n".join(describe_instances("azure/ND96asr_v4"))
    assert "Azure Standard_ND96asr_v4: 8× NVIDIA A100 40GB" in text and "InfiniBand" in text


def test_describe_overview_lists_every_provider_and_the_sources() -> None:
    text = "\n".join(describe_instances(None))
    for title in ("AWS (", "Google Cloud (", "Azure (", "Oracle Cloud (", "Lambda ("):
        assert title in text
    assert "g5.xlarge" in text and "Standard_NV6ads_A10_v5" in text and "1/6 of an NVIDIA A10" in text
    assert "Sources:" in text and "[AWS_EC2_AC]" in text and "[GCP_TOOLKIT_GPUS]" in text
    assert describe_instances("  ") == describe_instances(None)


def test_describe_one_type_shows_the_gpus_link_and_an_undocumented_interconnect() -> None:
    text = "\n".join(describe_instances("gcp/a2-megagpu-16g"))
    assert "Google Cloud a2-megagpu-16g: 16× NVIDIA A100 40GB" in text
    assert "interconnect: not documented by the sources read" in text
    assert "the NVIDIA L4's own link" in "\n".join(describe_instances("g2-standard-4"))


def test_the_kb_command_has_the_instances_topic() -> None:
    from gpudoctor.kb import describe, kb_info

    assert "instances" in describe.TOPICS
    assert describe.render_kb_text(topic="instances") == "\n".join(describe_instances(None)).rstrip() + "\n"
    one = describe.render_kb_text(topic="instances", item="p5.48xlarge")
    assert (
        one.startswith("AWS p5.48xlarge: 8× NVIDIA H100 80 GB")
        and describe.render_kb_text(topic="instances:p5.48xlarge") == one
    )
    with pytest.raises(KnowledgeError):
        describe.render_kb_text(topic="instances", item="nope.nothing")
    counts = kb_info()["cloud_instances"]["rows"]
    assert counts == {"instances": len(DATA["instances"]), "series": len(DATA["series"]), "images": len(DATA["images"])}
    assert "cloud_instances.json" in describe.render_kb_text()


def test_unknown_type_is_one_clear_line_with_near_names() -> None:
    with pytest.raises(KnowledgeError) as caught:
        describe_instances("p4d.24xlarg")
    message = str(caught.value)
    assert isinstance(caught.value, InputError)  # shown as one line, exit code 2
    assert "\n" not in message and "p4d.24xlarge" in message


def test_unknown_type_from_a_gpu_family_says_so() -> None:
    with pytest.raises(KnowledgeError, match="GPU family of AWS"):
        describe_instances("g6f.large")  # fractional L4 sizes: no share could be sourced, so no row


@given(item=any_code_points())
def test_describe_never_fails_other_than_with_a_knowledge_error(item: str) -> None:
    try:
        lines = describe_instances(item)
    except KnowledgeError as error:
        message = str(error)
        assert "\n" not in message and "\x1b" not in message and "\r" not in message
    else:
        assert lines
