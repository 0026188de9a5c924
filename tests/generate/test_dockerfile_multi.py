"""deepo-style Dockerfiles (``--framework torch,tensorflow,jax``) and ``--jupyter``: golden files, the venv layout
and why, JupyterLab's service lines, refusals, agreement of the builds' CUDA-library pins, and pip's own proof.

The machines are synthetic MachineTargets (a driver version as ``--for-driver`` gives it); the knowledge base
(``kb/data/pip_pins.json`` included) and the templates are the real ones.  The golden files live beside the
single-framework ones in tests/golden/dockerfiles (named ``multi-*`` / ``jupyter-*``), so the index test there
checks them too; hadolint checks them here.  Regenerate with GPUDOCTOR_UPDATE_GOLDEN=1 and review the diff.

The resolution tests ask pip (network to the package index; they skip, saying why, when it cannot be reached or
lacks a release): a single-venv golden's requirements resolve together in one dry-run with dependencies; a split
golden's do not, and each venv's alone does.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.generate.dockerfile import generate_dockerfile
from gpudoctor.generate.model import DockerfileRequest, GeneratedFile, GenerationRefused, MachineTarget
from gpudoctor.kb.pip_pins import agree, jupyter_pin
from tests.synthetic.sample_report import GOLDEN_DIR, check_golden


def synthetic_target(driver: str | None) -> MachineTarget:
    return MachineTarget(driver_version=driver, source=f"--for-driver {driver}" if driver else "this machine")


def multi(*frameworks: tuple[str, str | None], **fields: object) -> DockerfileRequest:
    (first, version), *more = frameworks
    return DockerfileRequest(framework=first, framework_version=version, more_frameworks=tuple(more), **fields)  # type: ignore[arg-type]


T, TF, J = ("torch", None), ("tensorflow", None), ("jax", None)
DRV580, DRV570 = synthetic_target("580.82.07"), synthetic_target("570.124.06")
CASES = {
    # The newest builds disagree (torch 2.14 and jax bring CUDA 13, TensorFlow CUDA 12): the search finds older ones
    # that agree (torch 2.10 cu128, TensorFlow 2.20, jax[cuda12]), in one venv.
    "multi-torch-tensorflow-jax-drv580-ubuntu24.04-runtime": multi(T, TF, J, os="ubuntu24.04", target=DRV580),
    # Every version pinned to the newest: torch and jax share /opt/venv (CUDA 13), TensorFlow (CUDA 12) has its own.
    "multi-torch2.14-tensorflow2.21-jax0.12.0.1-drv580-ubuntu24.04-runtime": multi(
        ("torch", "2.14"), ("tensorflow", "2.21"), ("jax", "0.12.0.1"), os="ubuntu24.04", target=DRV580
    ),
    "multi-torch-jax-drv580-ubuntu24.04-runtime": multi(T, J, os="ubuntu24.04", target=DRV580),
    "multi-tensorflow-jax-drv570-ubuntu24.04-runtime": multi(TF, J, os="ubuntu24.04", target=DRV570),
    # TensorFlow 2.19 pins cuDNN 9.3.0.75 exactly; JAX's plugins of the last releases need 9.8 or newer: two venvs.
    "multi-tensorflow2.19-jax-drv570-ubuntu24.04-runtime": multi(
        ("tensorflow", "2.19"), J, os="ubuntu24.04", target=DRV570
    ),
    "multi-torch-tensorflow-jax-cpu-py3.12": multi(T, TF, J, cpu=True, python="3.12"),
    "jupyter-torch-jax-drv580-ubuntu24.04-runtime": multi(T, J, jupyter=True, os="ubuntu24.04", target=DRV580),
    "jupyter-torch-drv570-ubuntu22.04-devel": multi(T, jupyter=True, os="ubuntu22.04", flavor="devel", target=DRV570),
}
GENERATED = {name: generate_dockerfile(request) for name, request in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_multi_dockerfile(name):
    check_golden(f"dockerfiles/{name}.Dockerfile", GENERATED[name].text)


def test_every_multi_golden_on_disk_is_one_of_these():
    on_disk = {
        p.name for p in (GOLDEN_DIR / "dockerfiles").glob("*.Dockerfile") if p.name.startswith(("multi-", "jupyter-"))
    }
    assert on_disk == {f"{name}.Dockerfile" for name in CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hadolint_finds_no_error_and_no_warning(name, tmp_path):
    import json

    from tests.generate.test_rocm_dockerfile import _hadolint

    path = tmp_path / "Dockerfile"
    path.write_text(GENERATED[name].text, encoding="utf-8")
    report = subprocess.run(
        [_hadolint(), "--format", "json", "--no-fail", str(path)], capture_output=True, text=True, timeout=60
    )
    findings = json.loads(report.stdout or "[]")
    assert [f for f in findings if f.get("level") in ("error", "warning")] == []
    assert set(re.findall(r"#\s*hadolint ignore=(\S+)", GENERATED[name].text)) <= {"DL3008"}


def test_same_request_same_bytes():
    for name, request in CASES.items():
        assert generate_dockerfile(request).text == GENERATED[name].text, name


def test_one_framework_without_jupyter_is_the_single_framework_file():
    # The dispatch sends only several frameworks or --jupyter to the multi generator: the existing golden holds.
    request = DockerfileRequest(framework="torch", os="ubuntu24.04", target=synthetic_target("580.82.07"))
    golden = GOLDEN_DIR / "dockerfiles" / "torch-drv580-ubuntu24.04-runtime.Dockerfile"
    assert generate_dockerfile(request).text == golden.read_text(encoding="utf-8")


def header(text: str) -> str:
    return text.split("\nFROM ", 1)[0]


def choice(result: GeneratedFile, what: str) -> str:
    return next(f"{c.chosen}: {c.why}" for c in result.choices if c.what == what)


def test_agreeing_builds_share_one_venv_and_torch_holds_its_libraries():
    text = GENERATED["multi-torch-jax-drv580-ubuntu24.04-runtime"].text
    assert "/opt/venv-" not in text and "python3 -m venv /opt/venv \\" in text
    # torch first from its index, then the PyPI framework held to everything the torch step installed.
    torch_at = text.index("pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130")
    freeze_at = text.index("pip freeze > /opt/venv/constraints.txt")
    jax_at = text.index("PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'jax[cuda13]==")
    assert torch_at < freeze_at < jax_at
    assert "one venv" in choice(GENERATED["multi-torch-jax-drv580-ubuntu24.04-runtime"], "venvs")


def test_pypi_frameworks_in_one_venv_resolve_in_one_pip_command():
    text = GENERATED["multi-tensorflow-jax-drv570-ubuntu24.04-runtime"].text
    assert "pip install 'tensorflow[and-cuda]==2.21.0' 'jax[cuda12]==0.12.0.1'\n" in text
    assert "PIP_CONSTRAINT" not in text


def test_disagreeing_pins_split_the_venvs_and_the_header_names_them():
    result = GENERATED["multi-tensorflow2.19-jax-drv570-ubuntu24.04-runtime"]
    why = choice(result, "venvs")
    assert "nvidia-cudnn-cu12" in why and "==9.3.0.75" in why and ">=9.10.2.21" in why, why
    assert "/opt/venv-tensorflow/bin/pip install 'tensorflow[and-cuda]==2.19.0'" in result.text
    assert "/opt/venv-jax/bin/pip install 'jax[cuda12]==0.12.0.1'" in result.text
    assert "PATH=/opt/venv-tensorflow/bin:$PATH" in result.text


def test_the_search_takes_older_builds_that_agree_over_the_newest_apart():
    result = GENERATED["multi-torch-tensorflow-jax-drv580-ubuntu24.04-runtime"]
    text, top = result.text, header(result.text)
    assert "/opt/venv-" not in text
    assert "pip install 'torch==2.10.*' --index-url https://download.pytorch.org/whl/cu128 \\" in text
    assert "pip install 'tensorflow[and-cuda]==2.20.0' 'jax[cuda12]==0.12.0.1'\n" in text
    flat = re.sub(r"\n#\s+", " ", top)
    # Which newer builds were passed over, and the pins that disagree.
    assert "torch 2.14.1 (cu130), the newest that fits, for torch 2.10.0 (cu128): their CUDA majors differ" in flat
    assert (
        "tensorflow 2.21.0 (and-cuda) pins nvidia-nccl-cu12 <3.0,>=2.27.7, torch 2.10.0 (cu128) needs ==2.27.5" in flat
    )
    assert "jax 0.12.0.1 (cuda13), the newest that fits, for jax 0.12.0.1 (cuda12)" in flat
    newest = "--framework torch==2.14,tensorflow==2.21.0,jax==0.12.0.1"
    assert newest in top
    assert "taken over torch 2.14.1 (cu130), the newest that fits" in choice(result, "torch")
    # The command the header gives is the pinned golden: the newest of each, split where they disagree.
    pinned = GENERATED["multi-torch2.14-tensorflow2.21-jax0.12.0.1-drv580-ubuntu24.04-runtime"]
    again = multi(*[tuple(p.split("==")) for p in newest.split()[1].split(",")], os="ubuntu24.04", target=DRV580)
    assert generate_dockerfile(again).text.split("\n", 3)[3] == pinned.text.split("\n", 3)[3]


@pytest.mark.parametrize("driver", ["580.82.07", "570.124.06", "550.54.15"])
def test_all_three_share_one_venv_on_recent_drivers(driver):
    from gpudoctor.generate.dockerfile_multi_candidates import pinned_of
    from gpudoctor.generate.dockerfile_multi_search import plan_builds

    request = multi(T, TF, J, target=synthetic_target(driver))
    text = generate_dockerfile(request).text
    assert "/opt/venv-" not in text and "PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'tensorflow" in text
    python = "3.12" if "ubuntu24.04" in text.split("\nFROM ", 1)[1].split("\n", 1)[0] else "3.10"
    os_token = "ubuntu24.04" if python == "3.12" else "ubuntu22.04"
    builds, layout = plan_builds(request, driver, python, os_token)
    pins = [pinned_of(build) for build in builds]
    assert layout.shared and all(pins) and agree([p for p in pins if p])[0]


def test_pinned_versions_that_disagree_split_only_the_odd_one_out():
    result = GENERATED["multi-torch2.14-tensorflow2.21-jax0.12.0.1-drv580-ubuntu24.04-runtime"]
    text, why = result.text, choice(result, "venvs")
    assert "torch, jax share /opt/venv" in why and "tensorflow has its own venv" in why and "CUDA majors differ" in why
    assert "/opt/venv/bin/pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130" in text
    assert "PIP_CONSTRAINT=/opt/venv/constraints.txt /opt/venv/bin/pip install 'jax[cuda13]==0.12.0.1'" in text
    assert "/opt/venv-tensorflow/bin/pip install 'tensorflow[and-cuda]==2.21.0'" in text
    assert "python3 -m venv /opt/venv \\" in text and "python3 -m venv /opt/venv-tensorflow \\" in text
    assert "PATH=/opt/venv/bin:$PATH" in text and "Newer builds passed over" not in text  # pinned: nothing searched
    # One base image for all: the newest of those each build would get alone, all run by the driver.
    assert "FROM nvidia/cuda:13.0.2-base-ubuntu24.04\n" in text


def test_torch_is_installed_first_in_a_shared_venv_whatever_the_order_asked():
    text = generate_dockerfile(multi(J, T, os="ubuntu24.04", target=DRV580)).text
    assert text.index("pip install 'torch==2.14.*'") < text.index("pip install 'jax[cuda13]")
    assert "PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'jax[cuda13]==0.12.0.1'" in text


def test_the_search_is_bounded_and_fast():
    import time

    from gpudoctor.generate.dockerfile_multi_candidates import _cached_build
    from gpudoctor.generate.dockerfile_multi_search import _pair_agrees

    for driver in ("580.82.07", "570.124.06", "550.54.15"):
        _cached_build.cache_clear()
        _pair_agrees.cache_clear()
        started = time.perf_counter()
        generate_dockerfile(multi(T, TF, J, jupyter=True, target=synthetic_target(driver)))  # every OS it tries
        assert time.perf_counter() - started < 0.5, driver


def test_cpu_frameworks_share_one_venv_with_cpu_wheels():
    text = GENERATED["multi-torch-tensorflow-jax-cpu-py3.12"].text
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    assert "'tensorflow==2.21.0' 'jax==0.12.0.1'" in text
    body = text[len(header(text)) :]
    assert "NVIDIA_VISIBLE_DEVICES" not in body and "[and-cuda]" not in body and "--require-gpu" not in body


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("jupyter-")])
def test_jupyter_is_a_non_root_service_with_no_token_in_the_image(name):
    text = GENERATED[name].text
    top = header(text)
    assert "-p 127.0.0.1:8888:8888 -e JUPYTER_TOKEN my-image" in top and "docker logs" in top
    assert "gpudoctor check --require-gpu" in top  # the preflight, one docker run away
    assert "--allow-root" not in text.replace("Never --allow-root", "")
    assert not re.search(r"JUPYTER_TOKEN=\S", text.replace("JUPYTER_TOKEN=$(openssl", ""))  # nothing baked in
    assert "ServerApp.token" not in text and "NotebookApp.token" not in text
    body = text[len(top) :]
    assert body.index("USER 10001:10001") < body.index("EXPOSE 8888") < body.index("HEALTHCHECK")
    assert text.rstrip().endswith(
        'CMD ["/opt/jupyter/bin/jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"]'
    )
    assert "python3 -m venv /opt/jupyter" in text or "-m venv /opt/jupyter" in text
    assert re.search(r"/opt/jupyter/bin/pip install 'jupyterlab==\d+\.\d+\.\d+'", text)
    assert "-m ipykernel install --prefix /opt/jupyter" in text
    assert len(re.findall(r"^CMD ", text, re.MULTILINE)) == 1  # JupyterLab's; the preflight is the header's line


def test_jupyter_without_preflight_suggests_no_second_command():
    text = generate_dockerfile(multi(T, jupyter=True, cpu=True, python="3.12", preflight="none")).text
    assert "#   CMD [" not in text and len(re.findall(r"^CMD ", text, re.MULTILINE)) == 1


def test_jupyter_pins_follow_the_image_python():
    # ipykernel 7.4 needs Python 3.11+: ubuntu22.04's 3.10 gets the newest release that admits it.
    text = GENERATED["jupyter-torch-drv570-ubuntu22.04-devel"].text
    pin = jupyter_pin("ipykernel", "3.10")
    assert pin is not None and f"'ipykernel=={pin.version}'" in text
    assert "--display-name 'PyTorch'" in text


def test_jupyter_kernels_are_one_per_framework_venv():
    result = generate_dockerfile(multi(("tensorflow", "2.19"), J, jupyter=True, os="ubuntu24.04", target=DRV570))
    assert "--display-name 'TensorFlow'" in result.text and "--display-name 'JAX'" in result.text
    assert "/opt/venv-tensorflow/bin/python -m ipykernel install" in result.text


REFUSED = {
    "amd": multi(T, J, vendor="amd"),
    "amd-jupyter": multi(T, jupyter=True, vendor="amd"),
    "twice": multi(T, ("torch", "2.13"), target=synthetic_target("580.82.07")),
    "unknown": multi(T, ("caffe", None), target=synthetic_target("580.82.07")),
    "requirements": multi(T, J, requirements="requirements.txt", target=synthetic_target("580.82.07")),
    "old-tensorflow": multi(T, ("tensorflow", "2.13"), os="ubuntu22.04", target=synthetic_target("570.124.06")),
    "jax-no-driver": multi(T, J, target=synthetic_target(None)),
    "bad-version": multi(T, ("jax", "x; rm -rf /"), target=synthetic_target("580.82.07")),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_combinations_that_cannot_work_are_refused_with_the_nearest(name):
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(REFUSED[name])
    assert raised.value.reason and "\n" not in str(raised.value)
    assert raised.value.nearest and raised.value.nearest.startswith("--"), raised.value.nearest


def test_the_nearest_request_of_a_duplicate_works():
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(REFUSED["twice"])
    assert raised.value.nearest == "--framework torch"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frameworks=st.lists(
        st.tuples(
            st.sampled_from(["torch", "tensorflow", "jax", "caffe", ""]),
            st.none() | st.sampled_from(["2.14", "2.19", "2.21", "0.12.0.1", "0.4.30", "1.15"]) | st.text(max_size=6),
        ),
        min_size=1,
        max_size=3,
    ),
    jupyter=st.booleans(),
    cpu=st.booleans(),
    python=st.none() | st.sampled_from(["3.8", "3.10", "3.12", "3.14"]),
    os_token=st.none() | st.sampled_from(["ubuntu22.04", "ubuntu24.04", "ubuntu20.04", "x"]),
    driver=st.none() | st.sampled_from(["470.256.02", "550.54.15", "570.124.06", "580.82.07", "garbage"]),
)
def test_any_multi_request_gives_a_dockerfile_or_a_refusal(frameworks, jupyter, cpu, python, os_token, driver):
    request = multi(*frameworks, jupyter=jupyter, cpu=cpu, python=python, os=os_token, target=synthetic_target(driver))
    try:
        result = generate_dockerfile(request)
    except GenerationRefused as refusal:
        assert refusal.reason and "\n" not in str(refusal)
        return
    assert result.text == generate_dockerfile(request).text
    assert result.text.startswith("# syntax=docker/dockerfile:1\n") and "USER 10001:10001" in result.text
