"""TensorFlow checks: does TensorFlow in the target Python list the GPU, and if not, why and what to type."""

from __future__ import annotations

from gpudoctor import kb
from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import TensorflowFacts
from gpudoctor.facts.predicates import driver_older
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import (
    driver_usable,
    driver_version,
    evidence_names,
    gpu_check_commands,
    gpu_names,
    gpus_present,
    gpus_unknown,
    pip,
    probe_status_outcome,
    python_words,
)

_PIP_LIBRARY_PATH = (
    'export LD_LIBRARY_PATH=$(python -c "import glob, nvidia; '
    "print(':'.join(sorted(glob.glob(nvidia.__path__[0] + '/*/lib'))))\"):$LD_LIBRARY_PATH"
)


def _describe(tf: TensorflowFacts) -> str:
    if tf.built_with_cuda:
        cuda = f"CUDA {tf.build_cuda}" if tf.build_cuda else "CUDA"
        cudnn = f", cuDNN {tf.build_cudnn}" if tf.build_cudnn else ""
        return f"tensorflow {tf.version} (built for {cuda}{cudnn})"
    if tf.built_with_cuda is False:
        return f"{tf.distribution or 'tensorflow'} {tf.version} (built without CUDA)"
    return f"tensorflow {tf.version}"


@check("TF001", area="tensorflow", title="TensorFlow imports in the target Python")
def tf_imports(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that `import tensorflow` works in the target Python, in a subprocess with a timeout,
    and what it was built for (`tf.sysconfig.get_build_info()`: CUDA, cuDNN, compute capabilities).

    Why it matters: an import that fails, hangs or crashes has to be fixed before anything else.

    How to fix: follow the finding; usually reinstall TensorFlow into that environment.
    """
    tf = facts.tensorflow
    if tf.source == "log":
        return ok("a pasted TensorFlow log (no version in it)", {"source": "log"})
    failed = probe_status_outcome("tensorflow", tf)
    if failed is not None:
        return failed
    data = {
        "version": tf.version,
        "distribution": tf.distribution,
        "built_with_cuda": tf.built_with_cuda,
        "build_cuda": tf.build_cuda,
        "build_cudnn": tf.build_cudnn,
        "build_compute_capabilities": tf.build_compute_capabilities,
        "keras": tf.keras_version,
        "python": tf.python.executable if tf.python else None,
        "import_s": tf.run.duration_s,
    }
    return ok(f"{_describe(tf)} in {python_words(tf.python)}", data)


@check("TF002", area="tensorflow", title="TensorFlow sees the GPU")
def tf_gpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a machine with an NVIDIA GPU, that `tf.config.list_physical_devices('GPU')` is not
    empty, and if it is, why: a build without CUDA (`tensorflow-cpu`, macOS), native Windows (no GPU
    support after TensorFlow 2.10), CUDA/cuDNN libraries of the majors TensorFlow was built for that
    cannot be loaded ("Could not load dynamic library", "Cannot dlopen some GPU libraries"), an older
    cuDNN loaded than it was compiled with, or a driver older than its CUDA needs.

    For a pasted TensorFlow log it reads the log's own word: libraries it could not load, a GPU it ignores as
    too old, a failed `cuInit`, or a GPU device created; a log that says none of these leaves it unknown.

    Why it matters: TensorFlow skips the GPU with only a log line and trains on the CPU.

    How to fix: `pip install "tensorflow[and-cuda]==VERSION"` (pulls the matching CUDA and cuDNN as pip
    packages; Linux and WSL2), put those packages' lib directories on LD_LIBRARY_PATH when TensorFlow can't
    find them, use WSL2 on Windows, or upgrade the driver; the finding prints the commands.
    """
    tf = facts.tensorflow
    if tf.source != "log" and (tf.run.status != "ok" or not tf.version):
        return not_applicable("TensorFlow not available to judge (see TF001)", {"status": tf.run.status})
    data = {
        "gpus": [{"name": g.name, "compute_capability": g.compute_capability} for g in tf.gpus],
        "missing_libraries": tf.log.missing_libraries,
        "cannot_dlopen": tf.log.cannot_dlopen,
        "log_lines": tf.log.lines[:20],
    }
    evidence = evidence_names("tensorflow", tf)
    if tf.log.cudnn_mismatch:
        loaded, compiled = tf.log.cudnn_mismatch
        message = (
            f"TensorFlow loaded cuDNN {loaded} but was compiled with {compiled}: an older cuDNN comes first "
            "on the loader path"
        )
        fix = Fix(
            "Put the pip cuDNN (from tensorflow[and-cuda]) first, or remove the older system cuDNN.",
            (_PIP_LIBRARY_PATH,),
        )
        return Outcome(
            message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="cudnn-version-mismatch")], data
        )
    if tf.source == "log":
        return _judge_log_only(facts, tf, data, evidence)
    if tf.gpus:
        return ok(
            f"{len(tf.gpus)} GPU{'s' if len(tf.gpus) != 1 else ''}: "
            + ", ".join(g.name or f"GPU {g.index}" for g in tf.gpus),
            data,
        )
    unknown = gpus_unknown(facts)
    if unknown is not None:
        message = f"{_describe(tf)} lists no GPU, and whether this machine has an NVIDIA GPU is not known: {unknown}"
        if tf.built_with_cuda is False:
            return not_applicable(message, data)
        fix = Fix("On the machine, see whether a GPU is on the bus and the driver answers.", gpu_check_commands())
        return Outcome(message, [Finding(Severity.WARNING, message, fix, evidence, cause="cuda-unavailable")], data)
    if not gpus_present(facts):
        return ok(f"{_describe(tf)}; no NVIDIA GPU on the PCI bus, so it runs on the CPU", data)
    python = tf.python
    os_name = python.os if python else None
    if os_name == "macos":
        return not_applicable("macOS: TensorFlow has no CUDA support there (tensorflow-metal uses the Apple GPU)")
    if os_name == "windows" and _newer_than_2_10(tf.version):
        message = (
            f"TensorFlow {tf.version} on native Windows can't use the GPU: 2.10 was the last release with "
            "native-Windows GPU support"
        )
        fix = Fix(
            "Run TensorFlow in WSL2 (Ubuntu) with the Windows NVIDIA driver, or stay on 2.10 here.",
            (
                "wsl --install -d Ubuntu",
                "wsl -d Ubuntu -- bash -lc \"python3 -m venv ~/tf && ~/tf/bin/pip install 'tensorflow[and-cuda]'\"",
                f'{pip(python)} install "tensorflow==2.10.*"  # last native-Windows GPU release (CUDA 11.2, cuDNN 8.1)',
            ),
            url="https://www.tensorflow.org/install/pip#windows-wsl2",
        )
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="tf-cpu-only")], data)
    if tf.built_with_cuda is False:
        message = f"{_describe(tf)}, but this machine has {gpu_names(facts)}: TensorFlow can only use the CPU"
        fix = _tf_install_fix(facts, tf, replace=True)
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="tf-cpu-only")], data)
    driver = driver_version(facts)
    floor = kb.wheel_driver_floor(tf.build_cuda, os_name or "linux") if tf.build_cuda else None
    if driver and floor and driver_usable(facts) and driver_older(driver, floor):
        message = (
            f"TensorFlow {tf.version} is built for CUDA {tf.build_cuda}, which needs driver ≥ {floor}; "
            f"this driver is {driver}"
        )
        fix = _tf_install_fix(facts, tf, replace=False)
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="driver-too-old")], data)
    if not driver_usable(facts):
        return not_applicable("no loaded NVIDIA driver, so TensorFlow can't list GPUs (see DRV001)", data)
    if tf.log.missing_libraries or tf.log.cannot_dlopen:
        missing = ", ".join(tf.log.missing_libraries) or "some GPU libraries"
        message = f"TensorFlow {tf.version} lists no GPU: it could not load {missing}"
        fix = _library_fix(facts, tf)
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="tf-cuda-libs-missing")], data)
    if tf.log.cuinit_error or tf.log.no_cuda_drivers:
        return _cuinit_failed(facts, tf.log.cuinit_error, data, evidence)
    message = f"TensorFlow {tf.version} lists no GPU though {gpu_names(facts)} is present"
    fix = _library_fix(facts, tf)
    return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="cuda-unavailable")], data)


def _judge_log_only(facts: Facts, tf: TensorflowFacts, data: dict[str, object], evidence: tuple[str, ...]) -> Outcome:
    """TF002 for a pasted TensorFlow log: what the log says about the GPU, and only that."""
    log = tf.log
    if log.missing_libraries or log.cannot_dlopen:
        missing = ", ".join(log.missing_libraries)
        message = "TensorFlow could not load " + (missing or "some GPU libraries") + " and skips the GPU"
        majors = sorted({lib.split(".so.")[1] for lib in log.missing_libraries if ".so." in lib})
        hint = f" (it was built for CUDA/cuDNN {', '.join(majors)})" if majors else ""
        fix = Fix(
            "Install the CUDA/cuDNN libraries of exactly the versions TensorFlow was built for" + hint + ". "
            "Easiest on Linux/WSL2: let pip bring them with a current TensorFlow; if the pip nvidia-* packages are "
            "already installed, put their lib directories on LD_LIBRARY_PATH.",
            ('pip install --upgrade "tensorflow[and-cuda]"', _PIP_LIBRARY_PATH),
            url="https://www.tensorflow.org/install/pip",
        )
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause="tf-cuda-libs-missing")], data)
    if log.too_old_gpu:
        capability, minimum = log.too_old_gpu
        message = (
            f"TensorFlow ignores the GPU: its compute capability {capability} is below the {minimum} this build "
            "requires (the log says so)"
        )
        fix = Fix("Use a TensorFlow release (or a source build) that still supports this GPU, or a newer GPU.")
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)
    if log.cuinit_error or log.no_cuda_drivers:
        return _cuinit_failed(facts, log.cuinit_error, data, evidence)
    if log.gpu_device_created:
        return ok("the TensorFlow log shows it found the GPU, and no GPU library failure", data)
    # Not known is not fine: a log that neither fails nor creates a GPU device does not say TensorFlow sees one.
    return not_applicable(
        "the TensorFlow log shows no GPU library failure, nor a GPU device created: whether TensorFlow sees the GPU "
        "is not known (`python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"`)",
        data,
    )


def _cuinit_failed(facts: Facts, error: str | None, data: dict[str, object], evidence: tuple[str, ...]) -> Outcome:
    """TensorFlow could not initialise CUDA (``failed call to cuInit``, or no libcuda at all)."""
    said = error or "Could not find cuda drivers on your machine"
    text = said.upper()
    others: tuple[str, ...]
    if error is None:
        cause, others = "libcuda-missing", ("driver-not-installed", "container-no-gpu-flag", "no-nvidia-gpu")
    elif "UNKNOWN" in text:
        cause, others = "cuda-unknown-error", ("nvidia-uvm-not-loaded", "container-cgroup-devices")
    elif "COMPAT_NOT_SUPPORTED" in text:
        cause, others = "cuda-forward-compat", ()
    elif "SYSTEM_DRIVER_MISMATCH" in text:
        cause, others = "driver-library-mismatch", ()
    elif "NO_DEVICE" in text:
        cause, others = "cuda-unavailable", ("cuda-visible-devices", "container-no-gpu-flag", "no-nvidia-gpu")
    else:
        cause, others = "cuda-unavailable", ()
    message = f'TensorFlow cannot use the GPU: "{" ".join(said.split())[:300]}"'
    unknown = gpus_unknown(facts)
    severity = Severity.PROBLEM
    fix = Fix("See whether the driver answers, on the machine the log came from.", gpu_check_commands())
    if unknown is not None and cause in ("libcuda-missing", "cuda-unavailable") and others:
        # TensorFlow says this on a machine without a GPU as well: whether one should be there is the question.
        severity = Severity.WARNING
        message += f"; whether this machine has an NVIDIA GPU is not known: {unknown}"
    finding = Finding(severity, message, fix, evidence, cause=cause, other_causes=others)
    return Outcome(message, [finding], data)


def _library_fix(facts: Facts, tf: TensorflowFacts) -> Fix:
    if tf.nvidia_packages:
        return Fix(
            "The pip nvidia-* libraries are installed but TensorFlow does not find them: put their lib "
            "directories on LD_LIBRARY_PATH (add the line to your venv's activate script to keep it).",
            (_PIP_LIBRARY_PATH.replace("python -c", f"{pip(tf.python).rsplit(' -m pip', 1)[0]} -c"),),
        )
    return _tf_install_fix(facts, tf, replace=False)


def _tf_install_fix(facts: Facts, tf: TensorflowFacts, replace: bool) -> Fix:
    python = tf.python
    choice = kb.choose_tensorflow(
        driver_version=driver_version(facts),
        python_version=python.version if python else None,
        os=(python.os if python else None) or "linux",
        tf_version=tf.version,
    )
    if choice.status != "ok" or not choice.requirement:
        notes = " ".join(n for n in (choice.python_note, "; ".join(choice.reasons)) if n)
        return Fix("No TensorFlow GPU build fits this machine: " + (notes or "see the reasons above."), ())
    commands = []
    if replace and tf.distribution and tf.distribution != "tensorflow":
        commands.append(f"{pip(python)} uninstall -y {tf.distribution}")
    commands.append(f'{pip(python)} install "{choice.requirement}"')
    summary = "Install TensorFlow with its CUDA libraries from pip."
    if choice.reasons:
        summary += f" Chosen: {choice.version} ({'; '.join(choice.reasons)})."
    if choice.python_note:
        summary += f" {choice.python_note}"
    if choice.upgrade_driver_to:
        summary += f" A driver ≥ {choice.upgrade_driver_to} would allow the newest release."
    return Fix(summary, tuple(commands), url="https://www.tensorflow.org/install/pip")


def _newer_than_2_10(version: str | None) -> bool:
    parts = (version or "").split(".")
    try:
        return (int(parts[0]), int(parts[1])) > (2, 10)
    except (ValueError, IndexError):
        return False
