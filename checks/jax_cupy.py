"""JAX and CuPy checks: the frameworks people run beside PyTorch and TensorFlow, on the GPU or silently not."""

from __future__ import annotations

from gpudoctor import kb
from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import JaxFacts
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import (
    capabilities,
    driver_usable,
    driver_version,
    evidence_names,
    gpu_names,
    gpus_present,
    gpus_unknown,
    pip,
    probe_status_outcome,
    python_words,
)


@check("JAX001", area="jax", title="JAX runs on the GPU")
def jax_on_gpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that JAX in the target Python imports and, on a machine with an NVIDIA GPU, uses it
    (`jax.default_backend()` is "gpu"), with its jaxlib and CUDA plugin packages (jax-cuda12-plugin /
    jax-cuda12-pjrt, or their cuda13 counterparts).

    Why it matters: plain `pip install jax` is CPU-only, and JAX then only warns "An NVIDIA GPU may be
    present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu." A plugin
    whose version doesn't match jaxlib, or whose CUDA needs a newer driver, fails the same quiet way.

    How to fix: `pip install "jax[cuda12]==<installed jax>"` (driver ≥ 525) or `"jax[cuda13]==…"` (driver ≥ 580):
    the extra installs the plugin and pjrt matched to jaxlib. The installed release is kept when it ships that
    extra; otherwise the newest release for this Python that does (the knowledge base's JAX release table).
    """
    jax = facts.jax
    failed = probe_status_outcome("jax", jax)
    if failed is not None:
        return failed
    platforms = [d.platform for d in jax.devices if d.platform]
    data = {
        "version": jax.version,
        "jaxlib": jax.jaxlib_version,
        "plugins": jax.plugins,
        "default_backend": jax.default_backend,
        "devices": platforms,
        "backend_errors": jax.backend_errors,
    }
    describe = f"jax {jax.version} (jaxlib {jax.jaxlib_version or '?'}) in {python_words(jax.python)}"
    gpu_devices = [p for p in platforms if p in ("gpu", "cuda")]
    if jax.default_backend in ("gpu", "cuda") or gpu_devices:
        return ok(f"{describe}: {len(gpu_devices)} GPU device{'s' if len(gpu_devices) != 1 else ''}", data)
    unknown = gpus_unknown(facts)
    if unknown is not None:
        return not_applicable(f"{describe}: on the CPU; whether there is an NVIDIA GPU is not known: {unknown}", data)
    if not gpus_present(facts):
        return ok(f"{describe}: on the CPU; no NVIDIA GPU on the PCI bus", data)
    if not driver_usable(facts):
        return not_applicable(f"{describe}: on the CPU, and no NVIDIA driver is loaded (see DRV001)", data)
    extra = _jax_requirement(facts, jax)
    if jax.plugins:
        reason = (
            "its CUDA plugin (" + ", ".join(f"{k} {v}" for k, v in sorted(jax.plugins.items())) + ") did not initialise"
        )
        if jax.backend_errors:
            reason += f': "{" ".join(jax.backend_errors[0].split())[:300]}"'
    else:
        reason = "no CUDA plugin is installed (plain `jax` is CPU-only)"
    message = f"JAX runs on the CPU though {gpu_names(facts)} is present: {reason}"
    fix = (
        Fix(
            "Install JAX with the CUDA plugin matched to jaxlib.",
            (f'{pip(jax.python)} install "{extra}"',),
            url="https://docs.jax.dev/en/latest/installation.html",
        )
        if extra
        else Fix("This driver is too old for JAX's CUDA 12 plugin: upgrade the driver to ≥ 525.60.13.", ())
    )
    finding = Finding(Severity.PROBLEM, message, fix, evidence_names("jax", jax), cause="jax-cpu-only")
    return Outcome(message, [finding], data)


def _jax_requirement(facts: Facts, jax: JaxFacts) -> str | None:
    """``jax[cudaNN]==V``: the installed JAX with the CUDA extra this driver and these GPUs run when that release
    ships it, else the newest release for this Python that does; unpinned when the table knows neither."""
    from gpudoctor.kb.jax_releases import choose_jax

    os_name = (jax.python.os if jax.python else None) or "linux"
    python = jax.python.major_minor if jax.python else None
    ccs = capabilities(facts, jax.devices)
    for version in (jax.version, None):
        choice = choose_jax(
            driver_version=driver_version(facts),
            python_version=python,
            os=os_name,
            compute_capabilities=ccs,
            jax_version=version,
        )
        if choice.status == "ok" and choice.requirement:
            return choice.requirement
    return kb.jax_install_requirement(driver_version(facts), os_name, compute_capabilities=ccs)


@check("CUPY001", area="cupy", title="CuPy reaches the GPU")
def cupy_works(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that CuPy in the target Python imports, that its CUDA runtime and the driver answer,
    and that the CuPy package matches the CUDA major the driver supports (cupy-cuda11x, cupy-cuda12x,
    cupy-cuda13x).

    Why it matters: a CuPy wheel for a newer CUDA major than the driver supports fails at the first array
    with "cudaErrorInsufficientDriver"; a source build (`cupy`) needs a CUDA toolkit.

    How to fix: install the CuPy package for the CUDA major the driver supports, e.g.
    `pip install cupy-cuda12x`, or upgrade the driver.
    """
    cupy = facts.cupy
    failed = probe_status_outcome("cupy", cupy)
    if failed is not None:
        return failed
    data = {
        "version": cupy.version,
        "distribution": cupy.distribution,
        "runtime_cuda": cupy.runtime_cuda,
        "driver_cuda": cupy.driver_cuda,
        "device_count": cupy.device_count,
        "error": cupy.error,
    }
    describe = f"{cupy.distribution or 'cupy'} {cupy.version} in {python_words(cupy.python)}"
    if cupy.device_count:
        return ok(
            f"{describe}: {cupy.device_count} device{'s' if cupy.device_count != 1 else ''} "
            f"(CUDA runtime {cupy.runtime_cuda or '?'})",
            data,
        )
    unknown = gpus_unknown(facts)
    if unknown is not None:
        return not_applicable(
            f"{describe}: no device, and whether there is an NVIDIA GPU is not known: {unknown}", data
        )
    if not gpus_present(facts):
        return ok(f"{describe}: no NVIDIA GPU on the PCI bus", data)
    if not driver_usable(facts):
        return not_applicable(f"{describe}: no NVIDIA driver is loaded (see DRV001)", data)
    wanted = _cupy_package(facts)
    message = "CuPy can't use the GPU" + (f': "{" ".join(cupy.error.split())[:300]}"' if cupy.error else "")
    commands = []
    if wanted and cupy.distribution and wanted != cupy.distribution:
        message += f"; {cupy.distribution} needs a newer driver than this one (CUDA {facts.driver.cuda_max})"
        commands = [f"{pip(cupy.python)} uninstall -y {cupy.distribution}", f"{pip(cupy.python)} install {wanted}"]
    fix = (
        Fix("Install the CuPy package for the CUDA major this driver supports.", tuple(commands)) if commands else None
    )
    cause = "cupy-cuda-mismatch" if commands else "cuda-unavailable"
    return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence_names("cupy", cupy), cause=cause)], data)


def _cupy_package(facts: Facts) -> str | None:
    major = kb.major(facts.driver.cuda_max)
    return kb.cupy_package_for_cuda(major) if major is not None else None
