"""`gpudoctor fleet k8s`: the manifests validate offline against the Kubernetes schemas (kubernetes-validate,
strict, the oldest and newest versions it carries), parse as YAML, the node-problem-detector plugin's command is
gpudoctor's real CLI and really runs here, the Dockerfile passes hadolint, hostile values are refused, and nothing
is overwritten without --force.  No API server is involved: none is reachable here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudoctor.cli import build_parser, main
from gpudoctor.generate.k8s_manifests import K8sRequest, k8s_manifests
from gpudoctor.generate.k8s_npd import CONFIG_NAME, PLUGIN_FILE
from tests.synthetic.sample_report import check_golden

yaml = pytest.importorskip("yaml", reason="PyYAML (a test dependency) parses the manifests as a reader would")
kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="the project's test extra has it")

VENV_BIN = str(Path(sys.executable).parent)

REQUESTS = {
    "built-image": K8sRequest(image=None, namespace="gpudoctor", interval_s=300.0, level="quick", budget_s=None),
    "own-image": K8sRequest(
        image="registry.example.com/gpu/gpudoctor-node:0.1.0",
        namespace="gpu-health",
        interval_s=120.5,
        level="full",
        budget_s=200.0,
        runtime_class="",
    ),
    "wheel": K8sRequest(
        image=None, namespace="gd", interval_s=600.0, level="standard", budget_s=30.0, preflight="wheel"
    ),
}


def _schema_versions() -> list[str]:
    """The oldest and the newest Kubernetes version whose strict schemas the installed package carries."""
    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    versions = sorted(
        (tuple(int(p) for p in d.name[1:].split("-")[0].split(".")), d.name[1:].split("-")[0])
        for d in folder.iterdir()
        if d.name.endswith("-local-strict")
    )
    return sorted({versions[0][1], versions[-1][1]})


def _documents(files: dict[str, str]) -> list[dict]:
    return [doc for name in sorted(files) if name.endswith(".yaml") for doc in yaml.safe_load_all(files[name])]


@pytest.mark.parametrize("version", _schema_versions())
@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_every_object_validates_strictly(case, version):
    documents = _documents(k8s_manifests(REQUESTS[case]))
    assert [d["kind"] for d in documents] == [
        "Namespace",
        "DaemonSet",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "DaemonSet",
    ]
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)  # raises on any error


def test_the_validator_does_reject_a_broken_daemon_set():
    document = _documents(k8s_manifests(REQUESTS["own-image"]))[1]
    document["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"  # a typo'd field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(document, _schema_versions()[-1], strict=True)


def _pod(files: dict[str, str], index: int) -> dict:
    return _documents(files)[index]["spec"]["template"]["spec"]


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_pods_see_every_gpu_take_none_and_have_least_privilege(case):
    request = REQUESTS[case]
    files = k8s_manifests(request)
    for index in (1, 6):  # the check DaemonSet, the NPD DaemonSet
        pod = _pod(files, index)
        assert pod.get("runtimeClassName", "") == request.runtime_class
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [
            {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}
        ]
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        for container in pod["containers"] + pod.get("initContainers", []):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True
            assert security["capabilities"] == {"drop": ["ALL"]}
            assert "nvidia.com/gpu" not in json.dumps(container["resources"])  # no GPU taken from the scheduler
            assert container["resources"]["limits"]
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
        assert pod["containers"][0]["image"] == (request.image or "gpudoctor-node:" + _version())
    assert _pod(files, 1)["automountServiceAccountToken"] is False  # the check needs no API access


def _version() -> str:
    from gpudoctor import __version__

    return __version__


def _plugin(files: dict[str, str]) -> dict:
    config_map = next(d for d in _documents(files) if d["kind"] == "ConfigMap")
    assert config_map["metadata"]["name"] == CONFIG_NAME
    return json.loads(config_map["data"][PLUGIN_FILE])


def test_npd_plugin_config_follows_the_custom_plugin_format():
    plugin = _plugin(k8s_manifests(REQUESTS["own-image"]))
    assert plugin["plugin"] == "custom"
    config = plugin["pluginConfig"]
    assert config["invoke_interval"] == "120.5s" and config["concurrency"] == 1
    (rule,) = plugin["rules"]
    assert rule["type"] == "permanent" and rule["condition"] == plugin["conditions"][0]["type"]
    assert rule["timeout"] == config["timeout"] == "90s"  # the quick level's 60 s budget + 30 s of grace
    assert os.path.isabs(rule["path"])  # NPD stats the path: no PATH lookup for it


def test_npd_plugin_command_is_gpudoctors_real_cli():
    rule = _plugin(k8s_manifests(REQUESTS["built-image"]))["rules"][0]
    assert rule["path"] == "/usr/bin/env" and rule["args"][0] == "gpudoctor"
    args = build_parser().parse_args(rule["args"][1:])
    assert (args.command, args.level, args.exit_codes, args.format) == ("check", "quick", "npd", "line")
    assert args.time_budget == 60.0


def _run_plugin(rule: dict, extra: list[str]) -> subprocess.CompletedProcess[bytes]:
    if not os.access(rule["path"], os.X_OK):
        pytest.skip(f"{rule['path']} is not here")
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([rule["path"], *rule["args"], *extra], capture_output=True, env=env, timeout=120)


def test_npd_plugin_really_runs_here_and_its_line_fits():
    plugin = _plugin(k8s_manifests(REQUESTS["built-image"]))
    done = _run_plugin(plugin["rules"][0], [])
    assert done.returncode in (0, 1, 2), done.stderr
    lines = done.stdout.decode("utf-8").splitlines()
    assert len(lines) <= 1
    assert len(done.stdout.strip()) <= plugin["pluginConfig"]["max_output_length"]  # NPD cuts by bytes


def test_npd_plugin_says_problem_with_exit_1_on_a_synthetic_broken_node(tmp_path):
    snapshot = tmp_path / "synthetic-driver-mismatch"
    snapshot.mkdir()
    # The error text NVML prints on a driver/library mismatch (see ../shared/fixtures B/); the node is synthetic.
    (snapshot / "nvidia-smi.txt").write_text("Failed to initialize NVML: Driver/library version mismatch\n")
    plugin = _plugin(k8s_manifests(REQUESTS["built-image"]))
    done = _run_plugin(plugin["rules"][0], ["--from", str(snapshot)])
    assert done.returncode == 1, done.stderr
    (line,) = done.stdout.decode("utf-8").splitlines()
    assert line.startswith("gpudoctor: ") and len(line.encode()) <= plugin["pluginConfig"]["max_output_length"]


def test_check_loop_really_runs_a_round_and_prints_the_report_and_status(tmp_path):
    """The check DaemonSet's own command (sh loop and all), run here until its first status line."""
    container = _pod(k8s_manifests(REQUESTS["built-image"]), 1)["containers"][0]
    command = list(container["command"])
    if not os.access(command[0], os.X_OK):
        pytest.skip(f"{command[0]} is not here")
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""), NODE_NAME="synthetic-node")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, text=True, start_new_session=True)
    output = []
    try:
        for line in process.stdout:  # type: ignore[union-attr]
            output.append(line)
            if line.startswith("gpudoctor-check: "):
                break
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
    status = output.pop()
    assert status.startswith("gpudoctor-check: node=synthetic-node exit=")
    report = json.loads("".join(output))
    assert report["tool"]["name"] == "gpudoctor"


def _hadolint() -> str:
    from tests.generate.test_rocm_dockerfile import _hadolint as find

    return find()


@pytest.mark.parametrize("case", ["built-image", "wheel"])
def test_dockerfile_passes_hadolint(case, tmp_path):
    files = k8s_manifests(REQUESTS[case])
    path = tmp_path / "Dockerfile"
    path.write_text(files["Dockerfile"], encoding="utf-8")
    report = subprocess.run(
        [_hadolint(), "--format", "json", "--no-fail", str(path)], capture_output=True, text=True, timeout=60
    )
    assert json.loads(report.stdout or "[]") == []


def test_no_dockerfile_when_an_image_is_named():
    assert "Dockerfile" not in k8s_manifests(REQUESTS["own-image"])


def test_same_request_same_bytes():
    for request in REQUESTS.values():
        assert k8s_manifests(request) == k8s_manifests(request)


@pytest.mark.parametrize(
    "name",
    [
        "00-namespace.yaml",
        "10-gpudoctor-check.yaml",
        "20-npd-rbac.yaml",
        "21-npd-config.yaml",
        "22-npd-daemonset.yaml",
        "README.md",
    ],
)
def test_golden(name):
    check_golden(f"k8s/own-image/{name}", k8s_manifests(REQUESTS["own-image"])[name])


HOSTILE = [
    ["--image", "evil image"],
    ["--image", "registry/x:1\n- name: injected"],
    ["--image", 'x"; rm -rf /'],
    ["--image", "UPPER/case"],
    ["--image", ""],
    ["--npd-image", "$(curl evil)"],
    ["--namespace", "kube_system"],
    ["--namespace", "a" * 64],
    ["--namespace", "ns\nkind: ClusterRole"],
    ["--namespace", "-leading"],
    ["--runtime-class", "Nvidia Runtime"],
]


@pytest.mark.parametrize("extra", HOSTILE, ids=[repr(h)[:40] for h in HOSTILE])
def test_hostile_values_are_refused_in_one_line(extra, tmp_path, capsys):
    out = tmp_path / "out"
    flag, value = extra
    assert main(["fleet", "k8s", "-o", str(out), "--image", "ok/image:1", f"{flag}={value}"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and error.startswith("gpudoctor: error:")
    assert not out.exists()


def test_nothing_is_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "k8s"
    argv = ["fleet", "k8s", "-o", str(out), "--image", "registry.example.com/gpudoctor:1"]
    assert main(argv) == 0
    readme = out / "README.md"
    readme.write_text("mine\n")
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err and readme.read_text() == "mine\n"
    assert main([*argv, "--force", "--namespace", "other"]) == 0
    assert "other" in (out / "00-namespace.yaml").read_text() and readme.read_text() != "mine\n"


def test_without_image_the_wheel_lands_beside_the_dockerfile(tmp_path):
    out = tmp_path / "k8s"
    assert main(["fleet", "k8s", "-o", str(out), "--preflight", "wheel"]) == 0
    dockerfile = (out / "Dockerfile").read_text()
    wheels = sorted(p.name for p in out.glob("gpudoctor-*.whl"))
    assert len(wheels) == 1 and f"COPY {wheels[0]} " in dockerfile
    assert (out / wheels[0]).read_bytes()[:2] == b"PK"  # a zip file, as a wheel is


def test_built_image_runs_the_plugin_command(tmp_path):
    """The image of DIR/Dockerfile, built for real where Docker, Podman or Buildah works (else skipped, saying
    why), answers the plugin's command with NPD's exit codes and at most one line."""
    from tests.generate.test_dockerfile_build import working_builder

    build = working_builder()
    out = tmp_path / "k8s"
    assert main(["fleet", "k8s", "-o", str(out), "--preflight", "wheel"]) == 0
    tag = "gpudoctor-node:k8s-test"
    built = subprocess.run([*build, "-t", tag, str(out)], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    rule = _plugin(k8s_manifests(REQUESTS["built-image"]))["rules"][0]
    engine = build[0] if build[0] != "buildah" else "podman"
    if shutil.which(engine) is None:
        pytest.skip(f"built with {build[0]}, and {engine} is not here to run it")
    ran = subprocess.run(
        [
            engine,
            "run",
            "--rm",
            "--read-only",
            "--user",
            "10001:10001",
            "--entrypoint",
            rule["path"],
            tag,
            *rule["args"],
        ],
        capture_output=True,
        timeout=300,
    )
    assert ran.returncode in (0, 1, 2) and len(ran.stdout.decode().splitlines()) <= 1, ran.stderr
