"""What a pasted report's own commands show: containers started without GPUs, images newer than the driver.

People paste the ``docker run`` line that failed next to the error.  These checks read those lines
(``gpudoctor.facts.pasted_commands``); on a live machine, or a snapshot without a paste, they do not apply.
"""

from __future__ import annotations

from gpudoctor.api import CheckContext, check, not_applicable, ok, problem
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.expectations import gpu_trouble
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks._cause_fixes import fix_for

# The catalogue's signature for TensorFlow answering "which GPUs?" with none (its one home).
TF_LISTS_NO_GPU = "tools-tf-lists-no-gpu"


@check("ENV006", area="environment", title="Pasted containers were started with GPU access")
def pasted_container_gpu_flags(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: in a pasted report, whether the `docker run` (podman, nerdctl) lines that led to a
    GPU error asked for GPUs: `--gpus all`, `--runtime=nvidia`, a CDI `--device nvidia.com/gpu=all`.

    Why it matters: a container started without them has no driver libraries and no /dev/nvidia* devices;
    nvidia-smi is "not found" and every framework falls back to the CPU, whatever the host has.

    How to fix: start the container with `--gpus all` (the NVIDIA Container Toolkit must be installed and
    registered with the engine on the host).
    """
    containers = facts.pasted_containers
    if not containers.runs:
        return not_applicable("no container command in the evidence")
    without = containers.runs_without_gpus
    if not without:
        return ok(f"{counted(len(containers.runs), 'container command')}, each with GPU access")
    if len(without) < len(containers.runs) or not gpu_trouble(facts):
        return ok(f"{counted(len(without), 'container command')} without GPU flags, and no GPU error shown with them")
    finding = problem(
        f"the container was started without GPU access ({without[0].engine} run without --gpus): it sees no "
        "driver and no GPU",
        fix_for("container-gpus", facts),
        [Ev.PASTE],
        data={"commands": [run.line for run in without]},
        cause="container-no-gpu-flag",
    )
    return finding


@check("ENV007", area="environment", title="A pasted container image's CUDA runs on the host driver")
def pasted_image_cuda(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: in a pasted report, whether the CUDA of the nvidia/cuda image named (in `docker run`,
    a Dockerfile's FROM, or the container runtime's own "cuda>=X.Y" requirement) is one the host driver
    runs.

    Why it matters: an image built for a newer CUDA than the driver supports fails at start
    ("unsatisfied condition: cuda>=12.4") or at the first CUDA call ("driver version is insufficient").

    How to fix: upgrade the host driver, or use an image of a CUDA the driver runs.
    """
    from gpudoctor import kb
    from gpudoctor.kb.versions import version_key

    images = facts.pasted_containers.image_cuda
    if not images:
        return not_applicable("no CUDA container image named in the evidence")
    stated = facts.stated
    newest = max(images, key=version_key)
    drivers = [v for v in stated.driver_versions if v.count(".") >= 1]
    verdict = kb.driver_runs_cuda(drivers[0], newest) if drivers else None
    driver_cuda = facts.pasted_containers.driver_cuda or next(iter(stated.cuda_driver_versions), None)
    if verdict is not None and verdict.status != "unknown":
        runs = verdict.status != "too_old"
        what = f"driver {drivers[0]}"
    elif driver_cuda:
        # The driver's own word on its newest CUDA (nvidia-smi's header, the runtime's message): older
        # releases than the knowledge base's table are judged by it.
        runs = version_key(driver_cuda)[:2] >= version_key(newest)[:2]
        what = f"a driver whose newest CUDA is {driver_cuda}"
    else:
        return not_applicable(f"image for CUDA {newest}; the host driver's CUDA is not in the evidence")
    if runs:
        return ok(f"image for CUDA {newest}; {what} runs it")
    return problem(
        f"the container image needs CUDA {newest}, newer than {what} supports",
        fix_for("container-cuda", facts),
        [Ev.PASTE],
        data={"image_cuda": newest},
        cause="container-cuda-too-new",
    )


@check("TF004", area="tensorflow", title="TensorFlow in a pasted report can use a GPU on its platform")
def pasted_tensorflow_platform(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: when a pasted report shows TensorFlow finding no GPU, whether its version and
    platform explain it: TensorFlow 2.11 and newer has no GPU support on native Windows, and every
    release needs the CUDA and cuDNN versions it was built with.

    Why it matters: an empty `tf.config.list_physical_devices('GPU')` has few causes, and these two are the
    commonest; no driver or CUDA reinstall fixes the first.

    How to fix: on Windows use WSL2 (or TensorFlow 2.10, the last with native GPU support); elsewhere install
    the CUDA/cuDNN of the tested build (`pip install 'tensorflow[and-cuda]'` on Linux from 2.14).
    """
    from gpudoctor.kb.tensorflow_builds import WINDOWS_REASON, tf_release

    if not any(m.signature.id == TF_LISTS_NO_GPU for m in facts.signature_matches):
        return not_applicable("no pasted TensorFlow output that lists no GPU")
    versions = facts.stated.tensorflow_versions
    release = tf_release(versions[0]) if versions else None
    if release is None:
        return not_applicable("TensorFlow lists no GPU, but its version is not in the evidence")
    if facts.pasted_platform == "windows" and not release.windows_native_gpu:
        return problem(
            f"TensorFlow {release.version} lists no GPU on native Windows: {WINDOWS_REASON}",
            fix_for("tf-gpu-install", facts),
            [Ev.PASTE],
            cause="tf-cpu-only",
        )
    runtimes = facts.stated.cuda_runtime_versions
    if release.cuda and runtimes and not any(r.startswith(release.cuda) for r in runtimes):
        return problem(
            f"TensorFlow {release.version} lists no GPU: it was built for CUDA {release.cuda} / cuDNN "
            f"{release.cudnn or '?'}, and the evidence shows CUDA {runtimes[0]}",
            fix_for("tf-and-cuda", facts),
            [Ev.PASTE],
            cause="tf-cuda-libs-missing",
        )
    return not_applicable(f"TensorFlow {release.version} lists no GPU; neither its platform nor its CUDA explains it")
