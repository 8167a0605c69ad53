"""The CI templates run as their runners run them, against the live server: the GitHub composite
action's steps (integrations/github-action/action.yml) and the GitLab job template
(integrations/gitlab-ci/freeze-check.yml), parsed from the YAML, their shell steps run by bash with
the inputs or variables as environment variables, the exit code read. Blocked → non-zero, allowed → 0.

Most tests replace the one `pip install` of the client, which fetches httpx from PyPI (about 10 s):
a `rebuild-tracker` stand-in runs the client from its source folder (PYTHONPATH =
clients/rebuild-tracker-cli/src), which is what the installed console script runs. One test per
template runs that install too, for real, into a fresh venv. Every other line runs as written.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.clients.cli import CLIENT, CLIENT_SRC, ROOT
from tests.conftest import api_token, make_user
from tests.freeze.factories import freeze_setup

ACTION_DIR = ROOT / "integrations" / "github-action"
ACTION = ACTION_DIR / "action.yml"
GITLAB = ROOT / "integrations" / "gitlab-ci" / "freeze-check.yml"
GITLAB_JOB = ".rebuild-tracker-freeze-check"
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def stand_in(bin_dir: Path) -> None:
    """A `rebuild-tracker` in bin_dir that runs the client from its source (PYTHONPATH), as installed."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    command = bin_dir / "rebuild-tracker"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rebuild_tracker_cli "$@"\n')
    command.chmod(0o755)


# The runner's own Python (python3 with venv and pip), for the tests that install the client for real.
RUNNER_PYTHON_BIN = str(Path(sys.base_prefix) / "bin")


@pytest.fixture
def world(transactional_db, lead):
    """trainer needs approval, kernels frozen, dashboards open (window 'Wave 2' of program 'rebuild')."""
    ref = freeze_setup(lead)
    ref["token"] = api_token(make_user("ci-bot"), "freeze-check")
    return ref


@pytest.fixture
def runner_path(tmp_path) -> str:
    """PATH with the stand-in for the installed `rebuild-tracker` console script first."""
    stand_in(tmp_path / "bin")
    return f"{tmp_path / 'bin'}:/usr/bin:/bin"


def run_bash(
    script: str, env: dict[str, str], runner_path: str, *, installed: bool = False
) -> subprocess.CompletedProcess[str]:
    """The stand-ins find the client's source on PYTHONPATH; a real install needs none, so gets none."""
    source = {} if installed else {"PYTHONPATH": str(CLIENT_SRC)}
    return subprocess.run(
        # GitHub runs a `shell: bash` step as `bash --noprofile --norc -eo pipefail {0}`.
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env={"PATH": runner_path, **source, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# --- GitHub composite action -------------------------------------------------------------------------


def action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def evaluate(value: str, inputs: dict[str, str], context: dict[str, str]) -> str:
    """A runner's `${{ }}` for the expressions the action uses: inputs.* (with their defaults) and
    the few github/runner values; anything else is a test failure, not an empty string."""
    declared = action()["inputs"]

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("inputs."):
            key = name.removeprefix("inputs.")
            return inputs.get(key, declared[key].get("default", ""))
        return context[name]

    return EXPRESSION.sub(one, value)


def run_action(
    inputs: dict[str, str], runner_path: str, tmp_path: Path, *, install: bool = False
) -> subprocess.CompletedProcess[str]:
    context = {"github.action_path": str(ACTION_DIR), "runner.temp": str(tmp_path)}
    done = None
    for step in action()["runs"]["steps"]:
        env = {name: evaluate(str(value), inputs, context) for name, value in step.get("env", {}).items()}
        if step["id"] == "install" and not install:
            stand_in(Path(env["CLIENT_VENV"]) / "bin")  # see the module docstring
            continue
        path = f"{RUNNER_PYTHON_BIN}:{runner_path}" if install else runner_path
        done = run_bash(step["run"], env, path, installed=install)
        if done.returncode != 0:
            return done
    assert done is not None
    return done


def test_the_action_is_composite_with_the_documented_inputs():
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) == {"url", "token", "component", "program"}
    assert {name for name, value in spec["inputs"].items() if value.get("required")} == {
        "url",
        "token",
        "component",
    }


def test_no_run_script_of_the_action_holds_an_expression():
    """Inputs reach the scripts as env vars only: pasted into `run:`, a value would become shell code."""
    steps = action()["runs"]["steps"]
    assert len(steps) == 2 and all(step["shell"] == "bash" for step in steps)
    assert [step["run"] for step in steps if "${{" in step["run"]] == []
    used = {m for step in steps for value in step.get("env", {}).values() for m in EXPRESSION.findall(value)}
    assert {"inputs.url", "inputs.token", "inputs.component", "inputs.program"} <= used


def test_the_install_step_installs_the_client_beside_the_action():
    install = next(step for step in action()["runs"]["steps"] if step["id"] == "install")
    client = Path(
        evaluate(
            install["env"]["CLIENT_PATH"], {}, {"github.action_path": str(ACTION_DIR), "runner.temp": "/t"}
        )
    )
    assert client.resolve() == CLIENT.resolve() and (client / "pyproject.toml").exists()
    assert 'pip install --quiet --disable-pip-version-check "$CLIENT_PATH"' in install["run"]


def test_the_action_fails_the_job_for_a_component_needing_approval(live_server, world, runner_path, tmp_path):
    inputs = {"url": live_server.url, "token": world["token"], "component": "trainer"}
    done = run_action(inputs, runner_path, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: trainer needs approval")


def test_the_action_installs_the_client_and_leaves_the_jobs_path_alone(live_server, world, tmp_path):
    """The install step as written (a venv in runner.temp, pip from PyPI), then the check by its path."""
    inputs = {"url": live_server.url, "token": world["token"], "component": "trainer"}
    done = run_action(inputs, "/usr/bin:/bin", tmp_path, install=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: trainer needs approval")
    assert (tmp_path / "rebuild-tracker-cli" / "bin" / "rebuild-tracker").exists()
    assert all("GITHUB_PATH" not in step["run"] for step in action()["runs"]["steps"])


def test_the_action_passes_for_an_open_component(live_server, world, runner_path, tmp_path):
    inputs = {"url": live_server.url, "token": world["token"], "component": "dashboards"}
    done = run_action(inputs, runner_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("allowed: dashboards")


def test_the_actions_program_input_limits_the_check(live_server, world, lead, runner_path, tmp_path):
    from tests.program.factories import make_program

    make_program(lead, slug="other")  # no window of its own in force
    inputs = {"url": live_server.url, "token": world["token"], "component": "kernels"}
    assert run_action({**inputs, "program": "rebuild"}, runner_path, tmp_path).returncode == 1
    assert run_action({**inputs, "program": "other"}, runner_path, tmp_path).returncode == 0


def test_the_action_fails_the_job_when_the_check_cannot_answer(live_server, world, runner_path, tmp_path):
    unknown = run_action(
        {"url": live_server.url, "token": world["token"], "component": "no-such"}, runner_path, tmp_path
    )
    assert unknown.returncode == 2 and "no-such" in unknown.stderr
    bad_token = run_action(
        {"url": live_server.url, "token": "rt_x", "component": "dashboards"}, runner_path, tmp_path
    )
    assert bad_token.returncode == 2


def test_an_input_holding_shell_code_stays_data(live_server, world, runner_path, tmp_path):
    marker = tmp_path / "pwned"
    inputs = {"url": live_server.url, "token": world["token"], "component": f'x"; touch {marker}; echo "'}
    done = run_action(inputs, runner_path, tmp_path)
    assert done.returncode == 2
    assert not marker.exists()


# --- GitLab CI job template --------------------------------------------------------------------------


def gitlab_job() -> dict:
    return yaml.safe_load(GITLAB.read_text())[GITLAB_JOB]


def run_gitlab_job(
    variables: dict[str, str], runner_path: str, *, install: bool = False
) -> subprocess.CompletedProcess[str]:
    """As a GitLab runner with a bash shell: the template's variables under the job's own (`extends`
    merges them), the CI/CD variables on top, every line of before_script then script in one shell
    that stops at the first failing line."""
    job = gitlab_job()
    lines = [
        line
        for line in [*job["before_script"], *job["script"]]
        # replaced by the `rebuild-tracker` on runner_path unless installing (module docstring)
        if install or "pip install" not in line
    ]
    env = {**{name: str(value) for name, value in job["variables"].items()}, **variables}
    return run_bash("\n".join(lines), env, runner_path, installed=install)


def project_variables(live_server, world) -> dict[str, str]:
    """What the project sets: its CI/CD variables and the job's `variables:` in .gitlab-ci.yml."""
    return {
        "REBUILD_TRACKER_URL": live_server.url,
        "REBUILD_TRACKER_TOKEN": world["token"],
        "REBUILD_TRACKER_CLIENT": str(CLIENT),
    }


def test_the_gitlab_template_is_a_hidden_job_reading_variables():
    job = gitlab_job()
    assert {"FREEZE_COMPONENT", "FREEZE_PROGRAM", "REBUILD_TRACKER_CLIENT"} <= set(job["variables"])
    assert any("pip install" in line and "$REBUILD_TRACKER_CLIENT" in line for line in job["before_script"])


def test_the_gitlab_job_fails_for_a_frozen_component(live_server, world, runner_path):
    done = run_gitlab_job(
        {**project_variables(live_server, world), "FREEZE_COMPONENT": "kernels"}, runner_path
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: kernels is frozen")


def test_the_gitlab_job_installs_the_client_and_checks(live_server, world, tmp_path):
    """Every line as written, pip included, with a fresh venv's python as the job image's python."""
    image = tmp_path / "image-python"
    subprocess.run([str(Path(RUNNER_PYTHON_BIN) / "python3"), "-m", "venv", str(image)], check=True)
    variables = {**project_variables(live_server, world), "FREEZE_COMPONENT": "kernels"}
    done = run_gitlab_job(variables, f"{image / 'bin'}:/usr/bin:/bin", install=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: kernels is frozen")
    assert (image / "bin" / "rebuild-tracker").exists()


def test_the_gitlab_job_passes_for_an_open_component(live_server, world, runner_path):
    done = run_gitlab_job(
        {**project_variables(live_server, world), "FREEZE_COMPONENT": "dashboards"}, runner_path
    )
    assert done.returncode == 0, done.stderr


def test_the_gitlab_jobs_program_variable_limits_the_check(live_server, world, lead, runner_path):
    from tests.program.factories import make_program

    make_program(lead, slug="other")
    variables = {**project_variables(live_server, world), "FREEZE_COMPONENT": "kernels"}
    assert run_gitlab_job({**variables, "FREEZE_PROGRAM": "rebuild"}, runner_path).returncode == 1
    assert run_gitlab_job({**variables, "FREEZE_PROGRAM": "other"}, runner_path).returncode == 0


def test_the_gitlab_job_without_a_component_or_client_fails(live_server, world, runner_path):
    no_component = run_gitlab_job(project_variables(live_server, world), runner_path)
    assert no_component.returncode == 2
    no_client = {
        **project_variables(live_server, world),
        "REBUILD_TRACKER_CLIENT": "",
        "FREEZE_COMPONENT": "dashboards",
    }
    done = run_gitlab_job(no_client, runner_path)
    assert done.returncode == 2 and "REBUILD_TRACKER_CLIENT" in done.stderr
