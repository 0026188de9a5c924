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
    gpu_names,
    gpus_present,
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
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)
    if tf.source == "log":
        return _judge_log_only(tf, data, evidence)
    if tf.gpus:
        return ok(
            f"{len(tf.gpus)} GPU{'s' if len(tf.gpus) != 1 else ''}: "
            + ", ".join(g.name or f"GPU {g.index}" for g in tf.gpus),
            data,
        )
    if not gpus_present(facts):
        return ok(f"{_describe(tf)}; no NVIDIA GPU here, so it runs on the CPU", data)
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
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)
    if tf.built_with_cuda is False:
        message = f"{_describe(tf)}, but this machine has {gpu_names(facts)}: TensorFlow can only use the CPU"
        return Outcome(
            message, [Finding(Severity.PROBLEM, message, _tf_install_fix(facts, tf, replace=True), evidence)], data
        )
    driver = driver_version(facts)
    floor = kb.wheel_driver_floor(tf.build_cuda, os_name or "linux") if tf.build_cuda else None
    if driver and floor and driver_usable(facts) and driver_older(driver, floor):
        message = (
            f"TensorFlow {tf.version} is built for CUDA {tf.build_cuda}, which needs driver ≥ {floor}; "
            f"this driver is {driver}"
        )
        fix = _tf_install_fix(facts, tf, replace=False)
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)
    if not driver_usable(facts):
        return not_applicable("no loaded NVIDIA driver, so TensorFlow can't list GPUs (see DRV001)", data)
    if tf.log.missing_libraries or tf.log.cannot_dlopen:
        missing = ", ".join(tf.log.missing_libraries) or "some GPU libraries"
        message = f"TensorFlow {tf.version} lists no GPU: it could not load {missing}"
        fix = _library_fix(facts, tf)
        return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)
    message = f"TensorFlow {tf.version} lists no GPU though {gpu_names(facts)} is present"
    return Outcome(message, [Finding(Severity.PROBLEM, message, _library_fix(facts, tf), evidence)], data)


def _judge_log_only(tf: TensorflowFacts, data: dict[str, object], evidence: tuple[str, ...]) -> Outcome:
    if not (tf.log.missing_libraries or tf.log.cannot_dlopen):
        return ok("the TensorFlow log shows no GPU library failure", data)
    missing = ", ".join(tf.log.missing_libraries)
    message = "TensorFlow could not load " + (missing or "some GPU libraries") + " and skips the GPU"
    majors = sorted({lib.split(".so.")[1] for lib in tf.log.missing_libraries if ".so." in lib})
    hint = f" (it was built for CUDA/cuDNN {', '.join(majors)})" if majors else ""
    fix = Fix(
        "Install the CUDA/cuDNN libraries of exactly the versions TensorFlow was built for" + hint + ". "
        "Easiest on Linux/WSL2: let pip bring them with a current TensorFlow; if the pip nvidia-* packages are "
        "already installed, put their lib directories on LD_LIBRARY_PATH.",
        ('pip install --upgrade "tensorflow[and-cuda]"', _PIP_LIBRARY_PATH),
        url="https://www.tensorflow.org/install/pip",
    )
    return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence)], data)


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
