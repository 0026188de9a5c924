"""Notebook platforms from their environment and marker files (facts.notebook, kb.notebook_platforms).

Every environment here is SYNTHETIC: the variable NAMES are the ones the knowledge base cites from public code
(kagglehub, Google's dataproc-spark-connect, mlflow, Lightning ...); the VALUES are made up and say so.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence import markers_notebook
from gpudoctor.evidence.system_scan import scan_environment
from gpudoctor.facts.environment import EnvFacts, parse_env_json
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.notebook import identify_notebook
from gpudoctor.kb import notebook_platforms as kb
from tests.helpers.strategies import json_like
from tests.synthetic.evidence import make_evidence

SYNTHETIC = "synthetic-value"


def _env(variables: dict[str, str] | None = None, present: tuple[str, ...] = ()) -> EnvFacts:
    return EnvFacts(collected=True, variables=dict(variables or {}), present=present)


def _own_markers(row: kb.NotebookPlatformInfo) -> tuple[EnvFacts, tuple[str, ...]]:
    """SYNTHETIC: the first identifying marker of a row, and nothing else."""
    if row.env_equals:
        name, value = row.env_equals[0]
        return _env({name: value}), ()
    if row.env_set:
        name = row.env_set[0]
        if name in row.env_presence:
            return _env(present=(name,)), ()
        return _env({name: SYNTHETIC}), ()
    return _env(), (row.files[0],)


def test_the_knowledge_base_has_the_main_platforms_each_with_a_source_and_a_way_to_a_gpu() -> None:
    rows = kb.notebook_platforms()
    keys = {row.key for row in rows}
    assert {"colab", "kaggle", "gradient", "sagemaker-studio", "databricks", "lightning-studio"} <= keys
    known_sources = set(kb.sources())
    for row in rows:
        assert row.source.startswith("https://"), row.key
        assert row.url.startswith("https://"), row.key
        assert row.get_gpu and not any(word in row.get_gpu for word in ("apt", "dnf", "sudo ", "install-script")), (
            row.key
        )
        assert row.sources and set(row.sources) <= known_sources, row.key
        assert row.env_set or row.env_equals or row.files, f"{row.key} can never be recognised"
        assert row.root is False  # none of these lets the user install a GPU driver


def test_every_marker_the_knowledge_base_reads_is_recorded_by_the_evidence() -> None:
    values, presence, files = kb.markers()
    assert set(values) <= set(markers_notebook.ENV_VALUES)
    assert set(presence) <= set(markers_notebook.ENV_PRESENCE)
    assert set(files) <= set(markers_notebook.FILES_EXIST + markers_notebook.FILES_READ)
    # A name is recorded one way only: a presence-only name never has its value written down.
    assert not set(markers_notebook.ENV_VALUES) & set(markers_notebook.ENV_PRESENCE)


def test_presence_only_markers_are_recorded_without_their_value() -> None:
    # SYNTHETIC environment: Lightning's host name and Kaggle's proxy URL are recorded as present, values dropped.
    record = scan_environment(
        {"LIGHTNING_CLOUDSPACE_HOST": "synthetic-host.example", "KAGGLE_DATA_PROXY_URL": "https://synthetic.example"}
    )
    assert record["present"] == ["KAGGLE_DATA_PROXY_URL", "LIGHTNING_CLOUDSPACE_HOST"]
    assert "synthetic-host.example" not in str(record) and "synthetic.example" not in str(record["variables"])


@pytest.mark.parametrize("row", kb.notebook_platforms(), ids=lambda row: row.key)
def test_each_platform_is_recognised_from_its_own_marker_alone(row: kb.NotebookPlatformInfo) -> None:
    env, exists = _own_markers(row)
    found = identify_notebook(env, exists, {})
    assert found is not None and found.key == row.key and found.name == row.name
    assert found.evidence


def test_a_plain_machine_is_no_notebook_platform() -> None:
    plain = _env({"CUDA_VISIBLE_DEVICES": "0", "PATH": "/usr/bin"}, ("KUBERNETES_SERVICE_HOST",))
    assert identify_notebook(plain, ("/usr/local/cuda",), {"/etc/os-release": "ID=ubuntu"}) is None
    assert identify_notebook(EnvFacts(), (), {}) is None


def test_colab_enterprise_is_told_from_colab_as_googles_own_detector_orders_them() -> None:
    both = _env({"VERTEX_PRODUCT": "COLAB_ENTERPRISE", "COLAB_RELEASE_TAG": SYNTHETIC})
    found = identify_notebook(both, (), {})
    assert found is not None and found.key == "colab-enterprise"
    workbench = identify_notebook(_env({"VERTEX_PRODUCT": "WORKBENCH_INSTANCE"}), (), {})
    assert workbench is not None and workbench.key == "vertex-workbench"
    # Another Vertex product value names neither.
    assert identify_notebook(_env({"VERTEX_PRODUCT": "SOMETHING_ELSE"}), (), {}) is None


@pytest.mark.parametrize(
    ("variables", "requested"),
    [
        ({"COLAB_GPU": "1"}, "GPU"),
        ({"COLAB_GPU": "0"}, "none"),
        ({"COLAB_GPU": ""}, None),  # an empty COLAB_GPU says nothing either way
        ({"COLAB_GPU": "", "COLAB_TPU_ADDR": "10.0.0.2:8470"}, "TPU"),
        ({"COLAB_GPU": "0", "COLAB_TPU_ADDR": ""}, "none"),
    ],
)
def test_what_the_colab_runtime_asked_for(variables: dict[str, str], requested: str | None) -> None:
    # SYNTHETIC values in the shape the cited threads report (COLAB_GPU=1 / 0 / empty; a TPU's grpc address).
    found = identify_notebook(_env({"COLAB_RELEASE_TAG": SYNTHETIC, **variables}), (), {})
    assert found is not None and found.key == "colab"
    assert found.accelerator_requested == requested


def test_a_recorded_value_never_reaches_the_evidence_lines() -> None:
    found = identify_notebook(_env({"PAPERSPACE_NOTEBOOK_REPO_ID": "synthetic-repo-id-<b>"}), (), {})
    assert found is not None and found.key == "gradient"
    assert all("synthetic-repo-id" not in line for line in found.evidence)


def test_sagemaker_studio_from_its_app_type_and_a_notebook_instance_from_the_metadata_file() -> None:
    studio = identify_notebook(_env({"SAGEMAKER_APP_TYPE": "JupyterLab"}), (), {})
    assert studio is not None and studio.key == "sagemaker-studio"
    instance = identify_notebook(_env(), ("/opt/ml/metadata/resource-metadata.json",), {})
    assert instance is not None and instance.key == "sagemaker"


def test_the_facts_carry_the_platform_from_env_json() -> None:
    # SYNTHETIC env.json in the shape scan_environment writes.
    record = scan_environment({"KAGGLE_KERNEL_RUN_TYPE": "Interactive", "KAGGLE_DATA_PROXY_URL": "https://x.example"})
    facts = Facts(make_evidence(env_json=record))
    assert facts.platform.notebook is not None and facts.platform.notebook.key == "kaggle"
    assert Facts(make_evidence(env_json=scan_environment({"HOME": "/root"}))).platform.notebook is None


@settings(max_examples=200, deadline=None)
@given(data=json_like(), exists=json_like(), files=json_like())
def test_identify_notebook_takes_garbage(data: object, exists: object, files: object) -> None:
    env = parse_env_json(data)
    found = identify_notebook(env, exists, files)  # type: ignore[arg-type]
    assert found is None or found.key in {row.key for row in kb.notebook_platforms()}


@settings(max_examples=200, deadline=None)
@given(
    variables=st.dictionaries(
        st.sampled_from(markers_notebook.ENV_VALUES + ("OTHER",)), st.text(max_size=20), max_size=6
    ),
    present=st.lists(st.sampled_from(markers_notebook.ENV_PRESENCE + ("OTHER",)), max_size=3),
    exists=st.lists(st.sampled_from(markers_notebook.FILES_EXIST + ("/tmp",)), max_size=3),
)
def test_any_mix_of_markers_gives_one_known_platform_or_none(
    variables: dict[str, str], present: list[str], exists: list[str]
) -> None:
    found = identify_notebook(_env(variables, tuple(present)), tuple(exists), {})
    shown = set(variables) | set(present)
    matches = [
        row.key
        for row in kb.notebook_platforms()
        if shown & set(row.env_set)
        or any(variables.get(name) == value for name, value in row.env_equals)
        or set(exists) & set(row.files)
    ]
    # The first matching row wins; no match, no platform.
    assert (found.key if found else None) == (matches[0] if matches else None)
    if found is not None:
        assert found.evidence and found.accelerator_requested in (None, "GPU", "TPU", "none")
