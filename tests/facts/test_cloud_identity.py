"""Cloud identity from DMI, cloud-init and metadata answers: real captures (tests/captured/cloud, see SOURCES.md)
parse into provider and instance type; anything else never raises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.scan_platform import scan_cloud_init
from gpudoctor.facts.cloud_identity import (
    identify_cloud,
    looks_like_ec2_type,
    parse_cloud_metadata,
    parse_dmi_identity,
)
from gpudoctor.facts.platform_model import CloudInstance, DmiIdentity, MetadataAnswer
from gpudoctor.kb import cloud_providers
from tests.helpers.strategies import json_like, mutated_json

CAPTURED = Path(__file__).resolve().parents[1] / "captured" / "cloud"
NOT_ASKED = MetadataAnswer()


def _captured(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


def _ds_identify_log(name: str) -> dict[str, str]:
    """ds-identify's "DMI_PRODUCT_NAME=..." lines -> DMI record keys."""
    return {
        key.removeprefix("DMI_").lower(): value
        for key, value in (line.split("=", 1) for line in _captured(name).splitlines() if "=" in line)
    }


def _cloud(dmi: dict[str, str], cloud_init: object = None, metadata: MetadataAnswer = NOT_ASKED) -> CloudInstance:
    found = identify_cloud(parse_dmi_identity(dmi), cloud_init, metadata)
    assert found is not None
    return found


# --------------------------------------------------------------------------- DMI captures


def test_xen_era_aws_from_a_real_paste_is_aws_with_the_type_unknown() -> None:
    linux = json.loads(_captured("aws-xen-dmi-pastebin-PVb6UP99.json"))["hardware"]["linux"]
    cloud = _cloud(linux)
    assert (cloud.provider, cloud.provider_name, cloud.instance_type) == ("aws", "AWS", None)
    assert 'bios_version containing "amazon"' in cloud.evidence
    # "HVM domU" is no instance type: it is said in words, with how to learn it.
    assert cloud.why_unknown is not None and '"HVM domU"' in cloud.why_unknown
    assert "--cloud-metadata" in cloud.why_unknown


def test_nitro_sys_vendor_from_a_real_c5_capture_names_aws() -> None:
    reads = re.findall(
        r"File\.read\('/sys/class/dmi/id/(\w+)'\)\n=> \"([^\"\\]*)", _captured("aws-nitro-c5-ohai-1082-excerpt.txt")
    )
    dmi = dict(reads)
    assert dmi == {"bios_vendor": "Amazon EC2", "sys_vendor": "Amazon EC2"}
    cloud = _cloud(dmi)
    assert cloud.provider == "aws" and cloud.evidence[0] == 'sys_vendor "Amazon EC2"'
    assert cloud.instance_type is None and "--cloud-metadata" in (cloud.why_unknown or "")


def test_nitro_product_name_from_a_real_gist_is_the_instance_type() -> None:
    # Two real captures of two Nitro instances together: the vendor string of one, the product name of the other.
    product_name = _captured("aws-nitro-trn1-gist-excerpt.txt").splitlines()[1]
    assert product_name == "trn1.32xlarge"
    cloud = _cloud({"sys_vendor": "Amazon EC2", "product_name": product_name})
    assert (cloud.instance_type, cloud.type_source, cloud.why_unknown) == ("trn1.32xlarge", "dmi", None)
    assert 'product_name "trn1.32xlarge"' in cloud.evidence


@pytest.mark.parametrize(
    "name", ["gce-dmi-new-instance-cloud-init-2835-excerpt.txt", "gce-dmi-old-instance-cloud-init-2835-excerpt.txt"]
)
def test_gce_dmi_from_real_ds_identify_logs_is_google_cloud_without_a_type(name: str) -> None:
    cloud = _cloud(_ds_identify_log(name))
    assert (cloud.provider, cloud.provider_name, cloud.instance_type) == ("gcp", "Google Cloud", None)
    assert cloud.why_unknown == (
        "Google Compute Engine's DMI does not name the machine type; "
        "`gpudoctor check --cloud-metadata` asks the metadata service"
    )


def test_on_premises_hyper_v_is_not_azure() -> None:
    text = _captured("hyperv-onprem-dmi-systemd-21816-excerpt.txt")
    dmi = dict(re.findall(r"/sys/class/dmi/id/(\w+): (.+)", text))
    assert dmi["sys_vendor"] == "Microsoft Corporation" and dmi["product_name"] == "Virtual Machine"
    assert identify_cloud(parse_dmi_identity(dmi), None, NOT_ASKED) is None


def test_the_azure_asset_tag_names_azure() -> None:
    text = _captured("cloud-init-ds-identify-test-aliyun-azure-excerpt.py.txt")
    tag = re.search(r'P_CHASSIS_ASSET_TAG: "([^"\\]+)', text)
    assert tag is not None
    # Hyper-V's strings plus Azure's tag: Azure (only the tag makes it so).
    cloud = _cloud(
        {"sys_vendor": "Microsoft Corporation", "product_name": "Virtual Machine", "chassis_asset_tag": tag[1]}
    )
    assert (cloud.provider, cloud.provider_name) == ("azure", "Azure")
    assert cloud.why_unknown is not None and cloud.why_unknown.startswith("Azure's DMI does not name the VM size")


@pytest.mark.parametrize(
    ("name", "pattern", "field", "provider"),
    [
        (
            "cloud-init-ds-identify-test-aliyun-azure-excerpt.py.txt",
            r'P_PRODUCT_NAME: "([^"\\]+)',
            "product_name",
            "alibaba",
        ),
        ("cloud-init-ds-identify-test-hetzner-excerpt.py.txt", r'P_SYS_VENDOR: "([^"\\]+)', "sys_vendor", "hetzner"),
        ("cloud-init-datasource-oracle-asset-tag-excerpt.py.txt", r'= "([^"]+)"', "chassis_asset_tag", "oci"),
        ("digitalocean-dmidecode-gist-excerpt.txt", r"Manufacturer: (.+)", "sys_vendor", "digitalocean"),
    ],
)
def test_cloud_init_and_capture_dmi_strings_name_their_cloud(
    name: str, pattern: str, field: str, provider: str
) -> None:
    match = re.search(pattern, _captured(name))
    assert match is not None
    cloud = _cloud({field: match[1]})
    assert cloud.provider == provider and cloud.instance_type is None and cloud.why_unknown


def test_a_plain_kvm_guest_is_no_cloud() -> None:
    # Synthetic: the QEMU defaults of a local VM.
    assert (
        identify_cloud(DmiIdentity(sys_vendor="QEMU", product_name="Standard PC (Q35 + ICH9, 2009)"), None, NOT_ASKED)
        is None
    )


# --------------------------------------------------------------------------- cloud-init and metadata answers


def test_cloud_init_instance_data_from_cloud_inits_docs_gives_type_and_place(tmp_path: Path) -> None:
    run = tmp_path / "run" / "cloud-init"
    run.mkdir(parents=True)
    (run / "instance-data.json").write_text(_captured("cloud-init-instance-data-ec2-docs-example.json"))
    record = scan_cloud_init(str(tmp_path))
    assert record == {
        "cloud_name": "aws",
        "platform": "ec2",
        "subplatform": "metadata (http://169.254.169.254)",
        "region": "us-east-1",
        "availability_zone": "us-east-1b",
        "instance_type": "t2.micro",
    }
    # No DMI at all (a container): cloud-init alone names the cloud.
    cloud = _cloud({}, record)
    assert (cloud.provider, cloud.instance_type, cloud.type_source) == ("aws", "t2.micro", "cloud-init")
    assert (cloud.region, cloud.zone) == ("us-east-1", "us-east-1b")
    assert cloud.evidence == ('cloud-init cloud_name "aws"',)


def _answered(provider: str, answers: dict[str, str]) -> dict[str, object]:
    """A cloud-metadata.json record whose requests were all answered 200 with these bodies."""
    requests = [
        {"method": "GET", "path": path, "status": 200, "body": body, "error": None} for path, body in answers.items()
    ]
    return {"provider": provider, "endpoint": "http://169.254.169.254", "requests": requests, "error": None}


def test_aws_answers_from_the_docs_examples_parse() -> None:
    document = json.loads(_captured("aws-instance-identity-document-docs-example.json"))
    record = _answered(
        "aws",
        {
            "/latest/meta-data/instance-type": document["instanceType"],
            "/latest/meta-data/placement/region": document["region"],
            "/latest/meta-data/placement/availability-zone": document["availabilityZone"],
            "/latest/meta-data/ami-id": _captured("aws-imds-ami-id-docs-example.txt"),
        },
    )
    answer = parse_cloud_metadata(record)
    assert answer == MetadataAnswer(
        asked=True,
        provider="aws",
        ok=True,
        instance_type="t2.micro",
        region="us-west-2",
        zone="us-west-2b",
        image="ami-0abcdef1234567890",
    )
    # The metadata answer outranks DMI's product name.
    cloud = _cloud({"sys_vendor": "Amazon EC2", "product_name": "g5.xlarge"}, None, answer)
    assert (cloud.instance_type, cloud.type_source, cloud.region) == ("t2.micro", "metadata", "us-west-2")


def test_azure_docs_example_answer_parses() -> None:
    answer = parse_cloud_metadata(
        _answered(
            "azure",
            {"/metadata/instance?api-version=2021-02-01": _captured("azure-imds-instance-docs-example-linux.json")},
        )
    )
    assert (answer.ok, answer.instance_type, answer.region, answer.zone) == (True, "Standard_A3", "westus", None)
    assert answer.image == "Canonical:UbuntuServer:16.04.0-LTS:latest"


def test_oci_answer_recorded_in_cloud_init_tests_parses() -> None:
    answer = parse_cloud_metadata(
        _answered("oci", {"/opc/v2/instance/": _captured("oci-opc-instance-cloud-init-test-oracle.json")})
    )
    assert (answer.instance_type, answer.region, answer.zone) == ("VM.Standard2.1", "us-phoenix-1", "qIZq:PHX-AD-1")
    cloud = _cloud({"chassis_asset_tag": "OracleCloud.com"}, None, answer)
    assert (cloud.provider_name, cloud.instance_type, cloud.type_source) == (
        "Oracle Cloud",
        "VM.Standard2.1",
        "metadata",
    )


def test_synthetic_gce_answers_in_the_documented_format_parse() -> None:
    # Synthetic: no verbatim public capture; the format is Google's documented "projects/NUM/machineTypes/TYPE".
    answer = parse_cloud_metadata(
        _answered(
            "gcp",
            {
                "/computeMetadata/v1/instance/machine-type": "projects/123456789012/machineTypes/a2-highgpu-1g",
                "/computeMetadata/v1/instance/zone": "projects/123456789012/zones/us-central1-a",
                "/computeMetadata/v1/instance/image": "projects/debian-cloud/global/images/debian-12-bookworm-v20240110",
            },
        )
    )
    assert (answer.instance_type, answer.zone, answer.region) == ("a2-highgpu-1g", "us-central1-a", "us-central1")


def test_a_failed_exchange_says_why_and_the_cloud_says_it_too() -> None:
    record = {
        "provider": "aws",
        "requests": [{"method": "PUT", "path": "/latest/api/token", "status": 403, "body": "", "error": None}],
        "error": None,
    }
    answer = parse_cloud_metadata(record)
    assert (answer.asked, answer.ok, answer.error) == (True, False, "HTTP 403 from PUT /latest/api/token")
    cloud = _cloud({"sys_vendor": "Amazon EC2"}, None, answer)
    assert cloud.why_unknown is not None and "HTTP 403 from PUT /latest/api/token" in cloud.why_unknown


def test_not_asked_and_not_sent_records() -> None:
    assert parse_cloud_metadata(None) == MetadataAnswer()
    unsent = {"provider": None, "requests": [], "error": "DMI names no cloud whose metadata service gpudoctor knows"}
    answer = parse_cloud_metadata(unsent)
    assert answer.asked and not answer.ok and answer.error == unsent["error"]


def test_values_that_are_no_token_are_not_used() -> None:
    answer = parse_cloud_metadata(_answered("aws", {"/latest/meta-data/instance-type": "<html>\x1b[31m oops</html>"}))
    assert answer.instance_type is None and not answer.ok


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("g5.xlarge", True),
        ("p4d.24xlarge", True),
        ("c6g.metal", True),
        ("c7i.metal-24xl", True),
        ("t2.micro", True),
        ("HVM domU", False),
        ("Google Compute Engine", False),
        ("", False),
        (None, False),
    ],
)
def test_ec2_type_shape(text: str | None, expected: bool) -> None:
    assert looks_like_ec2_type(text) is expected


def test_every_provider_row_is_sourced() -> None:
    sources = cloud_providers.sources()
    rows = cloud_providers.providers()
    assert {p.key for p in rows} >= {"aws", "gcp", "azure", "oci", "alibaba"}
    for row in rows:
        assert row.source in sources and row.markers and row.cloud_init_names
        assert all(marker.source in sources for marker in row.markers)
    assert cloud_providers.provider("gcp") is not None and cloud_providers.provider("nope") is None
    assert all("http" in text for text in sources.values())


# --------------------------------------------------------------------------- garbage in


@given(json_like(), json_like(), json_like())
def test_any_input_never_raises(dmi: object, cloud_init: object, record: object) -> None:
    answer = parse_cloud_metadata(record)
    found = identify_cloud(parse_dmi_identity(dmi), cloud_init, answer)
    assert found is None or isinstance(found, CloudInstance)


@given(data=st.data())
def test_mutated_real_answers_never_raise(data: st.DataObject) -> None:
    body = json.loads(_captured("azure-imds-instance-docs-example-linux.json"))
    record = data.draw(
        mutated_json(_answered("azure", {"/metadata/instance?api-version=2021-02-01": json.dumps(body)}))
    )
    answer = parse_cloud_metadata(record)
    assert answer.instance_type is None or answer.instance_type == "Standard_A3"


@given(json_like())
def test_scan_cloud_init_takes_any_instance_data(value: object) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        run = Path(root) / "run" / "cloud-init"
        run.mkdir(parents=True)
        (run / "instance-data.json").write_text(json.dumps({"v1": value, "ds": {"meta_data": value}}))
        record = scan_cloud_init(root)
    assert isinstance(record, dict)
    assert all(isinstance(v, str) for v in record.values())
