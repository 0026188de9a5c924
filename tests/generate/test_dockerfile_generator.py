"""`gpudoctor dockerfile`'s generator: golden files over a framework x driver x OS x flavor matrix, what every
file must hold, refusals with the nearest working request, and a property test over arbitrary requests.

The machines are synthetic MachineTargets (a driver version as ``--for-driver`` gives it); the knowledge base
and the templates are the real ones.  Regenerate the golden files with GPUDOCTOR_UPDATE_GOLDEN=1 and review
the diff.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor import __version__, kb
from gpudoctor.generate.dockerfile import generate_dockerfile, load_template, wheel_name
from gpudoctor.generate.dockerfile_python import OS_PYTHON
from gpudoctor.generate.model import DockerfileRequest, GeneratedFile, GenerationRefused, MachineTarget
from gpudoctor.kb.docker_images import admits_driver_branch, is_published
from tests.synthetic.sample_report import GOLDEN_DIR, check_golden

FRAMEWORKS = ("torch", "tensorflow", "jax")
DRIVERS = ("470.256.02", "535.247.01", "550.54.15", "570.124.06", "580.82.07")
OSES = ("ubuntu22.04", "ubuntu24.04")
FLAVORS = ("runtime", "devel")
CPU_CASES = (("torch", "3.12"), ("torch", "3.10"), ("tensorflow", "3.12"), ("jax", "3.12"))


def synthetic_target(driver: str | None, ccs: tuple[str, ...] = ()) -> MachineTarget:
    return MachineTarget(
        driver_version=driver, compute_capabilities=ccs, source=f"--for-driver {driver}" if driver else "this machine"
    )


def matrix() -> list[tuple[str, DockerfileRequest]]:
    cases = []
    for framework in FRAMEWORKS:
        for driver in DRIVERS:
            for os_token in OSES:
                for flavor in FLAVORS:
                    name = f"{framework}-drv{driver.split('.')[0]}-{os_token}-{flavor}"
                    cases.append(
                        (
                            name,
                            DockerfileRequest(
                                framework=framework, flavor=flavor, os=os_token, target=synthetic_target(driver)
                            ),
                        )
                    )
    for framework, python in CPU_CASES:
        cases.append((f"{framework}-cpu-py{python}", DockerfileRequest(framework=framework, cpu=True, python=python)))
    # Ubuntu 20.04's Python 3.8 is older than gpudoctor needs: those images come without the preflight.
    for framework in ("torch", "tensorflow"):
        request = DockerfileRequest(
            framework=framework, os="ubuntu20.04", preflight="none", target=synthetic_target("470.182.03")
        )
        cases.append((f"{framework}-drv470-ubuntu20.04-runtime-nopreflight", request))
    cases.append(("torch-cpu-py3.12-nopreflight", DockerfileRequest(cpu=True, python="3.12", preflight="none")))
    return cases


# Impossible or malformed requests beyond the matrix: each must be refused with a nearest request.
REFUSALS = {
    "tensorflow-1.15-drv550": DockerfileRequest(
        framework="tensorflow", framework_version="1.15", target=synthetic_target("550.54.15")
    ),
    "tensorflow-2.21-drv470": DockerfileRequest(
        framework="tensorflow", framework_version="2.21", os="ubuntu22.04", target=synthetic_target("470.256.02")
    ),
    "torch-2.14-python3.9": DockerfileRequest(
        framework="torch", framework_version="2.14", python="3.9", target=synthetic_target("570.124.06")
    ),
    "torch-drv418": DockerfileRequest(framework="torch", target=synthetic_target("418.40")),
    "tensorflow-drv418": DockerfileRequest(framework="tensorflow", target=synthetic_target("418.40")),
    "torch-os-ubi9": DockerfileRequest(framework="torch", os="ubi9", target=synthetic_target("550.54.15")),
    "torch-os-bogus": DockerfileRequest(framework="torch", os="beos5", target=synthetic_target("550.54.15")),
    # deadsnakes builds 3.7 and newer for jammy and noble (older ones need libssl<3), so 3.6 is no base image.
    "torch-python3.6": DockerfileRequest(framework="torch", python="3.6", target=synthetic_target("570.124.06")),
    "jax-no-driver": DockerfileRequest(framework="jax", target=synthetic_target(None)),
    "jax-unknown-release": DockerfileRequest(
        framework="jax", framework_version="0.3.25", target=synthetic_target("580.65.06")
    ),
    "jax-python3.8": DockerfileRequest(framework="jax", python="3.8", target=synthetic_target("580.65.06")),
    "jax-0.4.30-python3.13": DockerfileRequest(
        framework="jax",
        framework_version="0.4.30",
        python="3.13",
        os="ubuntu22.04",
        target=synthetic_target("580.65.06"),
    ),
    "jax-drv470": DockerfileRequest(framework="jax", target=synthetic_target("470.256.02")),
    "torch-requirements-outside-context": DockerfileRequest(
        framework="torch", requirements="../secrets.txt", target=synthetic_target("570.124.06")
    ),
    "torch-ubuntu20.04-with-preflight": DockerfileRequest(
        framework="torch", os="ubuntu20.04", target=synthetic_target("470.182.03")
    ),
    "torch-drv-branch-only": DockerfileRequest(framework="torch", target=synthetic_target("550")),
}

MATRIX = matrix()


def outcome(request: DockerfileRequest) -> GeneratedFile | GenerationRefused:
    try:
        return generate_dockerfile(request)
    except GenerationRefused as refusal:
        return refusal


OUTCOMES = {name: outcome(request) for name, request in MATRIX}
GENERATED = {name: result for name, result in OUTCOMES.items() if isinstance(result, GeneratedFile)}
REQUESTS = dict(MATRIX)


def test_matrix_is_mostly_files_not_refusals():
    assert len(GENERATED) >= 30, sorted(set(OUTCOMES) - set(GENERATED))


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_golden_dockerfile(name):
    check_golden(f"dockerfiles/{name}.Dockerfile", GENERATED[name].text)


def test_golden_refusals():
    lines = [f"{name}: {result}" for name, result in sorted(OUTCOMES.items()) if not isinstance(result, GeneratedFile)]
    for name, request in sorted(REFUSALS.items()):
        result = outcome(request)
        assert isinstance(result, GenerationRefused), f"{name} was not refused"
        lines.append(f"{name}: {result}")
    check_golden("dockerfiles/refusals.txt", "\n".join(lines) + "\n")


def test_no_orphan_golden_files():
    # The multi-framework and Jupyter goldens are test_dockerfile_multi's table; each file is one entry's, once.
    from tests.generate.test_dockerfile_multi import CASES as MULTI_CASES

    assert not set(GENERATED) & set(MULTI_CASES)
    on_disk = {path.name for path in (GOLDEN_DIR / "dockerfiles").glob("*.Dockerfile")}
    assert on_disk == {f"{name}.Dockerfile" for name in [*GENERATED, *MULTI_CASES]}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusals_name_the_nearest_request_in_cli_words(name):
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(REFUSALS[name])
    refusal = raised.value
    assert refusal.reason and "\n" not in str(refusal)
    assert refusal.nearest and refusal.nearest.startswith("--"), refusal.nearest


def test_refusal_of_a_tensorflow_release_the_driver_cannot_run_points_to_one_it_can():
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(REFUSALS["tensorflow-2.21-drv470"])
    nearest = raised.value.nearest
    assert nearest == "--framework tensorflow==2.14"
    # ...and the nearest is itself accepted as far as the framework goes (only the base image can still refuse).
    assert kb.choose_tensorflow(driver_version="470.256.02", python_version="3.10", tf_version="2.14").status == "ok"


def test_too_old_python_for_the_asked_torch_names_a_python_in_its_range():
    with pytest.raises(GenerationRefused) as raised:
        generate_dockerfile(REFUSALS["torch-2.14-python3.9"])
    assert raised.value.nearest == "--framework torch==2.14 --python 3.12"
    request = DockerfileRequest(
        framework="torch", framework_version="2.14", python="3.12", target=synthetic_target("570.124.06")
    )
    assert "torch==2.14.*" in generate_dockerfile(request).text


def from_tag(text: str) -> str:
    return next(line.split()[1] for line in text.splitlines() if line.startswith("FROM "))


def header(text: str) -> str:
    return text.split("\nFROM ", 1)[0]


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_file_is_well_formed(name):
    result, request = GENERATED[name], REQUESTS[name]
    text = result.text
    assert text.startswith("# syntax=docker/dockerfile:1\n") and text.endswith("\n")
    assert "$" not in text.replace("$PATH", "")  # every placeholder filled
    top = header(text)
    for choice in result.choices:  # the header names every choice
        assert choice.chosen in top, choice
    assert f"gpudoctor {__version__}" in top and "as of " in top and "Regenerate: gpudoctor dockerfile" in top
    assert re.search(r"^USER 10001:10001$", text, re.MULTILINE) and "useradd --uid 10001" in text
    assert "pip install gpudoctor==" not in text  # no index has this gpudoctor
    assert "RUN --mount=type=cache,target=/root/.cache/pip" in text
    if request.preflight == "wheel":
        assert f"\nCOPY {wheel_name()} /tmp/{wheel_name()}\n" in text and f"pip install /tmp/{wheel_name()}\n" in text
        assert re.search(r'^CMD \["gpudoctor", "check"', text, re.MULTILINE)
    else:
        assert request.preflight == "none" and "# No gpudoctor preflight" in text
        assert f'CMD ["python", "-c", "import {request.framework}; print({request.framework}.__version__)"]' in text
    if request.cpu:
        assert from_tag(text) == f"python:{request.python}-slim-bookworm"
        assert "NVIDIA_VISIBLE_DEVICES" not in text and "--require-gpu" not in text
    else:
        assert is_published(from_tag(text)), from_tag(text)
        assert request.target.driver_version in top
        assert "ARG DEBIAN_FRONTEND=noninteractive" in text
        assert "NVIDIA_VISIBLE_DEVICES=all" in text and "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in text
        assert "--no-install-recommends" in text and "rm -rf /var/lib/apt/lists/*" in text
        assert "--mount=type=cache,target=/var/cache/apt" in text and "-m venv /opt/venv" in text
        assert from_tag(text).endswith(f"-{request.os}")
        assert ("-devel-" in from_tag(text)) == (request.flavor == "devel")


@pytest.mark.parametrize("name", sorted(n for n in GENERATED if n.startswith("torch-drv")))
def test_torch_pip_line_pins_the_kb_wheel_from_its_index(name):
    request = REQUESTS[name]
    text = GENERATED[name].text
    wheel = kb.choose_torch_wheel(
        driver_version=request.target.driver_version,
        compute_capabilities=(),
        python_version=OS_PYTHON[request.os],
    )
    assert f"pip install '{wheel.requirement}' --index-url {wheel.index_url}" in text
    assert re.fullmatch(r"torch==\d+\.\d+\.\*", wheel.requirement)
    # The base image never has a newer CUDA than the driver runs natively, nor another major than the wheel.
    # Only an image whose NVIDIA_REQUIRE_CUDA admits the driver's branch may be newer (11.8.0 on R470).
    release = from_tag(text).split(":")[1].split("-")[0]
    image_cuda = tuple(int(x) for x in release.split(".")[:2])
    driver_max = tuple(int(x) for x in kb.max_cuda_for_driver(request.target.driver_version).split("."))
    wheel_cuda = tuple(int(x) for x in kb.torch_variant(wheel.torch, wheel.variant).cuda.split("."))
    assert image_cuda <= driver_max or admits_driver_branch(release, request.target.driver_version)
    assert image_cuda <= wheel_cuda and image_cuda[0] == wheel_cuda[0]


@pytest.mark.parametrize("name", sorted(n for n in GENERATED if n.startswith("tensorflow-drv")))
def test_tensorflow_pip_line_pins_the_kb_release(name):
    request = REQUESTS[name]
    choice = kb.choose_tensorflow(
        driver_version=request.target.driver_version,
        python_version=OS_PYTHON[request.os],
    )
    assert f"pip install '{choice.requirement}'" in GENERATED[name].text
    assert re.fullmatch(r"tensorflow(\[and-cuda\])?==\d+\.\d+\.\d+", choice.requirement)


@pytest.mark.parametrize("name", sorted(n for n in GENERATED if n.startswith("jax-")))
def test_jax_pip_line_pins_a_release_from_the_table(name):
    from gpudoctor.kb.jax_releases import choose_jax, jax_release

    request = REQUESTS[name]
    python = request.python or OS_PYTHON[request.os]
    driver = None if request.cpu else request.target.driver_version
    choice = choose_jax(driver_version=driver, python_version=python, cpu=request.cpu)
    assert f"pip install '{choice.requirement}'" in GENERATED[name].text
    assert re.fullmatch(r"jax(\[cuda1[23]\])?==\d+(\.\d+){2,3}", choice.requirement)
    release = jax_release(choice.version)
    assert release is not None and release.supports_python(python) is not False
    if choice.extra:
        assert choice.extra in release.extras


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_pip_requirement_is_pinned(name):
    # hadolint's DL3013 says the same; this holds even where hadolint is not installed.
    lines = re.findall(r"pip install (.*?)(?: \\\n|$)", GENERATED[name].text, re.MULTILINE)
    words = [w for args in lines for w in args.split() if not w.startswith(("-", "http", "/tmp/gpudoctor-"))]
    assert len(words) >= 1, lines  # the framework at least; gpudoctor comes from its wheel file
    for word in words:
        assert "==" in word, (name, word)


def test_cpu_torch_comes_from_the_cpu_index():
    text = GENERATED["torch-cpu-py3.12"].text
    assert re.search(r"pip install 'torch==\d+\.\d+\.\*' --index-url https://download.pytorch.org/whl/cpu", text)


def test_same_request_same_bytes():
    name, request = MATRIX[0]
    again = [outcome(request) for _ in range(2)]
    assert all(isinstance(r, type(OUTCOMES[name])) for r in again)
    if isinstance(again[0], GeneratedFile):
        assert again[0].text == again[1].text == OUTCOMES[name].text


def test_newer_driver_gets_a_cuda_13_torch_and_older_one_stays_on_12():
    assert "/whl/cu130" in GENERATED["torch-drv580-ubuntu24.04-runtime"].text
    assert from_tag(GENERATED["torch-drv550-ubuntu22.04-runtime"].text) == "nvidia/cuda:12.4.1-base-ubuntu22.04"


def test_without_os_the_newest_ubuntu_that_fits_is_taken():
    newest = generate_dockerfile(DockerfileRequest(target=synthetic_target("570.124.06")))
    assert from_tag(newest.text).endswith("-ubuntu24.04")
    # Driver 550 runs CUDA <= 12.4; ubuntu24.04 images start at 12.5.1, so ubuntu22.04 it is.
    older = generate_dockerfile(DockerfileRequest(target=synthetic_target("550.54.15")))
    assert from_tag(older.text) == "nvidia/cuda:12.4.1-base-ubuntu22.04"
    assert "--os" not in header(older.text).split("Regenerate:")[1].splitlines()[0]


def test_another_python_comes_from_deadsnakes_and_is_said_so():
    text = generate_dockerfile(
        DockerfileRequest(python="3.11", os="ubuntu24.04", target=synthetic_target("570.124.06"))
    ).text
    assert "add-apt-repository -y ppa:deadsnakes/ppa" in text and "python3.11 -m venv /opt/venv" in text
    assert "deadsnakes" in header(text)


def test_requirements_are_copied_and_held_to_the_framework_build():
    text = generate_dockerfile(
        DockerfileRequest(requirements="deps/requirements.txt", target=synthetic_target("570.124.06"))
    ).text
    assert "COPY deps/requirements.txt /tmp/requirements.txt" in text
    assert "echo 'torch==2.14.*' > /opt/venv/constraints.txt" in text
    assert "--constraint /opt/venv/constraints.txt" in text


def test_gpu_names_and_capabilities_reach_the_header():
    target = MachineTarget(
        driver_version="570.124.06",
        compute_capabilities=("12.0",),
        gpu_names=("NVIDIA GeForce RTX 5090",),
        source="this machine",
    )
    result = generate_dockerfile(DockerfileRequest(target=target))
    assert "NVIDIA GeForce RTX 5090 (compute capability 12.0)" in header(result.text)
    assert "compute capability 12.0" in next(c.why for c in result.choices if c.what == "torch")


def test_templates_load_from_the_package():
    assert load_template("Dockerfile.cuda.tmpl").startswith("# syntax=docker/dockerfile:1")
    assert "$base_image" in load_template("Dockerfile.cpu.tmpl")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    framework=st.sampled_from(FRAMEWORKS + ("caffe",)),
    version=st.none()
    | st.sampled_from(["1.15", "2.0", "2.7", "2.13", "2.14", "2.21", "0.4.30", "9.9"])
    | st.text(max_size=6),
    python=st.none() | st.sampled_from(["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "2.7"]),
    flavor=st.sampled_from(FLAVORS + ("slim",)),
    os_token=st.none() | st.sampled_from(OSES + ("ubuntu20.04", "ubi9", "")) | st.text(max_size=8),
    cpu=st.booleans(),
    driver=st.none()
    | st.sampled_from(DRIVERS + ("418.40", "450.80.02", "525.60.13", "595.45.04", "999.1"))
    | st.from_regex(r"[1-9]\d{2}\.\d{1,3}(\.\d{2})?", fullmatch=True)
    | st.text(max_size=10),
    ccs=st.lists(
        st.sampled_from(["3.5", "5.0", "6.1", "7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0", "x"]), max_size=2
    ),
    requirements=st.none() | st.sampled_from(["requirements.txt", "a/b.txt", "/etc/passwd", "x y.txt"]),
)
def test_any_request_gives_a_dockerfile_or_a_refusal(
    framework, version, python, flavor, os_token, cpu, driver, ccs, requirements
):
    request = DockerfileRequest(
        framework=framework,
        framework_version=version,
        python=python,
        flavor=flavor,
        os=os_token,
        cpu=cpu,
        requirements=requirements,
        target=MachineTarget(driver_version=driver, compute_capabilities=tuple(ccs)),
    )
    try:
        result = generate_dockerfile(request)
    except GenerationRefused as refusal:
        assert refusal.reason and "\n" not in str(refusal)
        return
    assert isinstance(result, GeneratedFile) and result.kind == "dockerfile"
    tag = from_tag(result.text)
    assert is_published(tag) if not cpu else tag.startswith("python:")
    assert result.text == generate_dockerfile(request).text
