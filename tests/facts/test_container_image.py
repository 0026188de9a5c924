"""Which image a container runs, from its environment and files.

The environments here are SYNTHETIC: written by hand with the ENV names and value shapes real images set (NGC
PyTorch 23.10's `env`, nvidia/cuda base Dockerfiles, aws/deep-learning-containers Dockerfile.gpu; see
gpudoctor/evidence/markers_image.py for where each name was read).

SOURCES of the ROCm / cloud names (each read in public material; the environments below stay SYNTHETIC):
- rocm/pytorch: ROCm/pytorch .ci/docker/ubuntu-rocm/Dockerfile at 10b22ea5c6a60ffa85520eb2d293affc48cea8ee
  (ENV PYTORCH_ROCM_ARCH, ROCM_PATH, MAGMA_HOME, BUILD_ENVIRONMENT); AMD's guide
  (ROCm/rocm-install-on-linux docs/install/3rd-party/pytorch-install.rst at 01a6299f: BUILD_ENVIRONMENT is set in
  rocm/pytorch:latest-base; image names pytorch-linux-<os>-rocm<ver>-py<ver>); a public ``docker history``:
  BUILD_ENVIRONMENT=pytorch-linux-focal-rocm5.3-py3.7, MAGMA_HOME=/opt/rocm/magma.
- Google Cloud DLC: ``printenv`` of gcr.io/deeplearning-platform-release/rapids-gpu.21-12 pasted in a public
  Dockerfile: CONTAINER_NAME=rapids-gpu/21-12+cu110, CONTAINER_URL=us-docker.pkg.dev/deeplearning-platform-release/
  gcr.io/rapids-gpu.21-12:nightly-2022-05-26, DL_ANACONDA_HOME=/opt/conda, CUDA_VERSION=11.0.3.
- Azure ML: MicrosoftDocs/azure-docs articles/machine-learning/resource-curated-environments.md (2021-2022:
  ENV AZUREML_CONDA_ENVIRONMENT_PATH /azureml-envs/pytorch-1.10); Azure/AzureML-Containers
  base/gpu/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04/Dockerfile at 0095813e (/IMAGE_INFORMATION).
- deepo: ufoym/deepo docker/Dockerfile.all-py38-cu113 at 245f19cf (FROM nvidia/cuda, ENV LANG only).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence import markers_image
from gpudoctor.facts.container_image import compat_driver, identify_image
from gpudoctor.facts.container_image_kinds import azureml_image, gcp_image, other_image, rocm_image
from gpudoctor.facts.environment import EnvFacts, parse_env_json
from tests.helpers.strategies import json_like

SYNTHETIC_NGC_PYTORCH_2310 = {
    "NVIDIA_PRODUCT_NAME": "PyTorch",
    "CUDA_VERSION": "12.2.2.009",
    "PYTORCH_VERSION": "2.1.0a0+32f93b1",
    "PYTORCH_BUILD_VERSION": "2.1.0a0+32f93b1",
    "CUDNN_VERSION": "8.9.5.29",
    "NVIDIA_BUILD_ID": "71422337",
    "CUDA_DRIVER_VERSION": "535.104.05",
    "NVIDIA_PYTORCH_VERSION": "23.10",
}
SYNTHETIC_NVIDIA_CUDA = {
    "CUDA_VERSION": "12.4.1",
    "NV_CUDA_CUDART_VERSION": "12.4.127-1",
    "NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471",
}
SYNTHETIC_AWS_DLC = {"DLC_CONTAINER_TYPE": "training", "CUDA_VERSION": "12.1.0", "CUDNN_VERSION": "8.9.2.26"}


def _env(variables: dict[str, str]) -> EnvFacts:
    return EnvFacts(collected=True, variables=variables)


def test_ngc_pytorch_image():
    image = identify_image(_env(SYNTHETIC_NGC_PYTORCH_2310), ("/NGC-DL-CONTAINER-LICENSE",), {}, {})
    assert image is not None
    assert (image.kind, image.name, image.release) == ("ngc", "NGC PyTorch 23.10", "23.10")
    assert (image.cuda_version, image.built_for_driver) == ("12.2.2", "535.104.05")
    assert image.frameworks == {"torch": "2.1.0a0+32f93b1"}
    assert image.compat_driver is None


def test_ngc_image_with_forward_compat_libraries():
    dirs = {
        "/usr/local/cuda/compat/lib": (
            "libcuda.so",
            "libcuda.so.1",
            "libcuda.so.545.23.08",
            "libnvidia-ptxjitcompiler.so.1",
        )
    }
    image = identify_image(_env(SYNTHETIC_NGC_PYTORCH_2310), (), {}, dirs)
    assert image is not None and image.compat_driver == "545.23.08"
    assert any("libcuda.so.545.23.08" in line for line in image.evidence)


def test_compat_driver_takes_the_newest_library():
    dirs = {
        "/usr/local/cuda/compat": ("libcuda.so.525.85.12",),
        "/usr/local/cuda/compat/lib": ("libcuda.so.535.54.03",),
    }
    assert compat_driver(dirs) == "535.54.03"
    assert compat_driver({"/usr/local/cuda/compat": ("libcuda.so", "README")}) is None


def test_plain_nvidia_cuda_image():
    image = identify_image(_env(SYNTHETIC_NVIDIA_CUDA), (), {}, {})
    assert image is not None
    assert (image.kind, image.cuda_version, image.release) == ("nvidia-cuda", "12.4.1", None)
    assert image.require_cuda == SYNTHETIC_NVIDIA_CUDA["NVIDIA_REQUIRE_CUDA"]


def test_aws_deep_learning_container():
    image = identify_image(_env(SYNTHETIC_AWS_DLC), (), {}, {})
    assert image is not None and image.kind == "aws-dlc" and "12.1.0" in image.name


def test_no_image_markers():
    assert identify_image(_env({"PATH": "/usr/bin", "CUDA_VERSION": "12.4.1"}), (), {}, {}) is None
    assert identify_image(EnvFacts(), (), {}, {}) is None


def test_junk_release_and_driver_values_are_not_taken():
    env = dict(SYNTHETIC_NGC_PYTORCH_2310, NVIDIA_PYTORCH_VERSION="latest", CUDA_DRIVER_VERSION="$(reboot)")
    image = identify_image(_env(env), (), {}, {})
    assert image is not None and image.release is None and image.built_for_driver is None


def test_every_name_read_is_recorded():
    for name in ("NVIDIA_PRODUCT_NAME", "NVIDIA_PYTORCH_VERSION", "CUDA_DRIVER_VERSION", "DLC_CONTAINER_TYPE"):
        assert name in markers_image.ENV_VALUES
    assert "/usr/local/cuda/compat/lib" in markers_image.DIRS_LIST


@given(
    json_like(),
    st.lists(st.text(max_size=30), max_size=5),
    st.dictionaries(st.text(max_size=40), st.lists(st.text(max_size=40), max_size=4), max_size=4),
)
def test_identify_never_raises(env_record, exists, dirs):
    env = parse_env_json({"variables": env_record} if isinstance(env_record, dict) else env_record)
    identify_image(env, tuple(exists), {}, {k: tuple(v) for k, v in dirs.items()})


@given(st.dictionaries(st.sampled_from(markers_image.ENV_VALUES), st.text(max_size=60)))
def test_identify_never_raises_on_known_names(variables):
    identify_image(_env(variables), (), {}, {})


# SYNTHETIC, with the names and value shapes the sources above show.
SYNTHETIC_ROCM_PYTORCH = {
    "BUILD_ENVIRONMENT": "pytorch-linux-jammy-rocm6.2-py3.10",
    "MAGMA_HOME": "/opt/rocm/magma",
    "PYTORCH_ROCM_ARCH": "gfx900;gfx906;gfx908;gfx90a;gfx1030",
    "ROCM_PATH": "/opt/rocm",
}
SYNTHETIC_GCP_DLC = {
    "CONTAINER_NAME": "rapids-gpu/21-12+cu110",
    "CONTAINER_URL": "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/rapids-gpu.21-12:nightly-2022-05-26",
    "DL_ANACONDA_HOME": "/opt/conda",
    "CUDA_VERSION": "11.0.3",
    "NV_CUDA_CUDART_VERSION": "11.0.221-1",
    "NVIDIA_REQUIRE_CUDA": "cuda>=11.0 brand=tesla,driver>=418,driver<419",
}
SYNTHETIC_AZUREML = {
    "AZUREML_CONDA_ENVIRONMENT_PATH": "/azureml-envs/pytorch-1.10",
    "CUDA_VERSION": "11.1.1",
    "NVIDIA_REQUIRE_CUDA": "cuda>=11.1 brand=tesla,driver>=418,driver<419",
}


def test_rocm_pytorch_image_and_its_rocm_from_build_environment():
    image = identify_image(_env(SYNTHETIC_ROCM_PYTORCH), (), {}, {})
    assert image is not None
    assert (image.kind, image.name, image.release) == ("rocm", "rocm/pytorch (ROCm 6.2)", "6.2")
    assert image.cuda_version is None and image.built_for_driver is None


def test_rocm_pytorch_without_build_environment_has_no_release():
    env = {k: v for k, v in SYNTHETIC_ROCM_PYTORCH.items() if k != "BUILD_ENVIRONMENT"}
    image = identify_image(_env(env), (), {}, {})
    assert image is not None and (image.kind, image.name, image.release) == ("rocm", "rocm/pytorch", None)


def test_a_cuda_ci_build_environment_is_not_rocm():
    env = {"BUILD_ENVIRONMENT": "pytorch-linux-jammy-cuda12.4-cudnn9-py3-gcc11", "MAGMA_HOME": "/usr/local/magma"}
    assert rocm_image(_env(env)) is None


def test_google_cloud_dlc_beats_its_nvidia_cuda_base():
    image = identify_image(_env(SYNTHETIC_GCP_DLC), (), {}, {})
    assert image is not None and image.kind == "gcp-dlc"
    assert image.name == "Google Cloud Deep Learning Container rapids-gpu/21-12+cu110"
    assert image.cuda_version == "11.0.3" and image.require_cuda is not None  # still judged by its CUDA


def test_google_cloud_dlc_with_an_unprintable_name_is_named_without_it():
    env = dict(SYNTHETIC_GCP_DLC, CONTAINER_NAME="x; rm -rf / \x1b[31m")
    kind = gcp_image(_env(env))
    assert kind is not None and kind.name == "Google Cloud Deep Learning Container"


def test_container_name_alone_is_not_google():
    assert gcp_image(_env({"CONTAINER_NAME": "my-app"})) is None


def test_azure_ml_environment():
    image = identify_image(_env(SYNTHETIC_AZUREML), (), {}, {})
    assert image is not None and (image.kind, image.name) == ("azureml", "Azure ML environment pytorch-1.10")
    assert image.cuda_version == "11.1.1"


def test_azure_ml_base_image_information_file():
    files = {"/IMAGE_INFORMATION": "openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04, Materializaton Build:20230620.v1\n"}
    kind = azureml_image(_env({}), files)
    assert kind is not None and kind.name == "Azure ML environment openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04"
    assert azureml_image(_env({}), {"/IMAGE_INFORMATION": "something else"}) is None


def test_deepo_reads_as_its_nvidia_cuda_base():
    # SYNTHETIC: deepo's Dockerfile adds only ENV LANG to nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04.
    env = {"LANG": "C.UTF-8", "CUDA_VERSION": "11.3.1", "NVIDIA_REQUIRE_CUDA": "cuda>=11.3 brand=tesla,driver>=418"}
    image = identify_image(_env(env), (), {}, {})
    assert image is not None and image.kind == "nvidia-cuda"


def test_the_new_names_are_recorded():
    for name in (
        "BUILD_ENVIRONMENT",
        "MAGMA_HOME",
        "CONTAINER_NAME",
        "CONTAINER_URL",
        "AZUREML_CONDA_ENVIRONMENT_PATH",
    ):
        assert name in markers_image.ENV_VALUES
    assert "/IMAGE_INFORMATION" in markers_image.FILES_READ
    assert not set(markers_image.ENV_VALUES) & set(markers_image.ENV_PRESENCE)


@given(
    st.dictionaries(
        st.sampled_from(markers_image.ENV_VALUES + ("PYTORCH_ROCM_ARCH",)), st.text(max_size=80), max_size=8
    ),
    st.dictionaries(st.sampled_from(markers_image.FILES_READ), st.text(max_size=120)),
)
def test_other_images_never_raise(variables, files):
    kind = other_image(_env(variables), files)
    if kind is not None:
        assert kind.kind in ("rocm", "gcp-dlc", "azureml") and kind.name.isprintable()
    identify_image(_env(variables), (), files, {})
