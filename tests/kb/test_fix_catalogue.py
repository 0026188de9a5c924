"""The fix catalogue's routes: every distro's driver route ends with a reboot, uses its own family's package
manager, and a floor or an older GPU moves a distro off its own driver onto NVIDIA's repository."""

from __future__ import annotations

import pytest

from gpudoctor.kb import fix_catalogue as F
from gpudoctor.kb.distros import DISTROS
from gpudoctor.kb.driver_branches import driver_needs


@pytest.mark.parametrize("token", sorted(DISTROS))
def test_default_route_per_distro(token: str) -> None:
    distro = DISTROS[token]
    route = F.driver_route(distro)
    assert route.steps[-1] == F.Step(F.REBOOT)
    assert route.family == distro.family
    installs = [word for step in route.steps if step.kind == F.INSTALL for word in step.words]
    assert all(header in installs for header in distro.headers)
    commands = F.typed_commands(route)
    assert commands[-1] == "sudo reboot"
    manager = "apt-get" if distro.family == "apt" else "dnf"
    assert any(command.startswith(f"sudo {manager} install -y ") for command in commands)


def test_a_floor_above_debians_branch_takes_nvidias_repository() -> None:
    debian = DISTROS["debian12"]
    assert F.driver_route(debian, driver_needs((), "535")).route == "debian"
    newer = F.driver_route(debian, driver_needs((), "580"))
    assert newer.route == "nvidia-apt" and F.uses_nvidia_repository(newer) and newer.packages == ("nvidia-open-580",)
    assert F.driver_route(DISTROS["ubuntu24.04"], driver_needs((), "580")).route == "nvidia-apt"


def test_pre_turing_gets_the_proprietary_stream_pinned_to_its_last_branch() -> None:
    pascal = driver_needs(("6.1",))  # a GTX 1050: Pascal's last branch is R580, proprietary modules only
    route = F.driver_route(DISTROS["rocky9"], pascal)
    assert route.stream == "580-dkms" and route.packages == ("cuda-drivers",)
    assert F.driver_route(DISTROS["ubuntu24.04"], pascal).packages == ("cuda-drivers-580",)
    no_gpu = F.driver_route(DISTROS["rocky9"])  # none known: a Turing or newer GPU, the open modules, LTS pinned
    assert no_gpu.stream == "580-open" and no_gpu.packages == ("nvidia-open",)


@pytest.mark.parametrize(
    ("os_id", "id_like", "version", "expected"),
    [
        ("linuxmint", ("ubuntu",), "21.3", "ubuntu-drivers"),
        ("debian", (), "13", "debian"),
        ("fedora", (), "40", "nvidia-dnf"),
        ("arch", (), None, "generic"),
        (None, (), None, "generic"),
    ],
)
def test_unknown_releases_get_their_familys_route(
    os_id: str | None, id_like: tuple[str, ...], version: str | None, expected: str
) -> None:
    route = F.driver_route_for_os(os_id, id_like, version)
    assert route.route == expected
    assert F.typed_commands(route)


def test_nouveau_regenerates_the_right_initramfs() -> None:
    assert "sudo dracut --force" in F.blacklist_nouveau_commands("rocky", ("rhel",))
    assert "sudo update-initramfs -u" in F.blacklist_nouveau_commands("ubuntu", ())
