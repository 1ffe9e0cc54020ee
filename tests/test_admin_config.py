"""The administrator's ``hdsp_agent/admin.json``: read only from system config dirs, laid over the user's.

Jupyter's own precedence puts the user's config dir before ``/etc/jupyter`` (and lets a list set in one file
replace the list of another), so these tests write a user config that tries to loosen every part of the floor
and check the admin's settings hold, with the admin's dir as ``$JUPYTER_CONFIG_PATH`` (what the hub tests and
Zero to JupyterHub use) and as a system dir like ``/etc/jupyter`` (``admin_config.py`` says why).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jupyter_core.paths
import pytest

from hdsp_agent.admin_config import admin_config_dirs, load_admin_settings
from hdsp_agent.agent.model_setup import UserModelFile
from hdsp_agent.agent.models import catalog_from_config
from hdsp_agent.config import HdspAgentConfig, load_cli_config

ADMIN = {
    "disabled_tools": ["fetch_url_content"],
    "deny_rules": ["run_terminal_command(echo floor*)"],
    "base_url": "http://127.0.0.1:8000/v1",
    "model": "company-model",
    "max_steps": 7,
}
USER_LOOSENING = {
    "disabled_tools": [],
    "deny_rules": [],
    "allow_rules": ["run_terminal_command(echo*)"],
    "base_url": "http://127.0.0.1:9/v1",
    "model": "my-own-model",
    "max_steps": 500,
}


def write_json(path: Path, payload: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload))


def make_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placement: str) -> tuple[Path, Path]:
    """(user config dir, admin config dir); the admin's in $JUPYTER_CONFIG_PATH or a system dir."""
    user, admin = tmp_path / "home" / ".jupyter", tmp_path / "etc-jupyter"
    user.mkdir(parents=True)
    admin.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)  # not under a hub unless a test says so
    if placement == "JUPYTER_CONFIG_PATH":
        monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(admin))
    else:
        monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
        monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(admin)])
    write_json(user / "jupyter_server_config.json", {"HdspAgentApp": USER_LOOSENING})
    write_json(admin / "hdsp_agent" / "admin.json", ADMIN)
    return user, admin


@pytest.fixture(params=["JUPYTER_CONFIG_PATH", "system-dir"])
def dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> tuple[Path, Path]:
    return make_dirs(tmp_path, monkeypatch, request.param)


def test_the_users_config_dir_is_not_an_admin_dir(dirs: tuple[Path, Path]) -> None:
    user, admin = dirs
    assert admin in admin_config_dirs()
    assert user not in admin_config_dirs()


def test_the_user_config_cannot_remove_the_floor_or_change_fixed_settings(dirs: tuple[Path, Path]) -> None:
    config = load_cli_config()
    assert "fetch_url_content" in config.disabled_tools
    assert "run_terminal_command(echo floor*)" in config.deny_rules
    assert (config.base_url, config.model, config.max_steps) == (
        "http://127.0.0.1:8000/v1",
        "company-model",
        7,
    )
    # What the user adds on top stays: the floor is a union.
    assert config.allow_rules == ["run_terminal_command(echo*)"]


def test_without_admin_json_an_etc_jupyter_config_is_only_a_default(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, admin = dirs
    (admin / "hdsp_agent" / "admin.json").unlink()
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(admin)])
    write_json(admin / "jupyter_server_config.json", {"HdspAgentApp": ADMIN})
    config = load_cli_config()
    assert config.disabled_tools == [] and config.model == "my-own-model"


def test_an_admin_json_in_the_users_own_dir_is_ignored(dirs: tuple[Path, Path]) -> None:
    user, _ = dirs
    write_json(user / "hdsp_agent" / "admin.json", {"deny_rules": [], "model": "mine"})
    assert load_cli_config().model == "company-model"
    assert all(source.parent.parent != user for source in load_admin_settings().sources)


def test_a_broken_admin_file_is_reported_and_an_unknown_key_skipped(
    dirs: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    _, admin = dirs
    write_json(admin / "hdsp_agent" / "admin.json", {**ADMIN, "no_such_setting": 1})
    config = load_cli_config()
    assert "fetch_url_content" in config.disabled_tools
    assert "no_such_setting" in caplog.text
    (admin / "hdsp_agent" / "admin.json").write_text("{not json")
    settings = load_admin_settings()
    assert settings.values == {} and "not read" in settings.problems[0]


def test_a_user_allow_rule_in_permissions_json_cannot_lift_an_admin_deny(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, _ = make_dirs(tmp_path, monkeypatch, "JUPYTER_CONFIG_PATH")  # the CLI runs in a process of its own
    write_json(user / "hdsp_agent" / "permissions.json", {"allow": ["run_terminal_command(echo*)"]})
    check = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "policy", "check", "run_terminal_command"]
        + [json.dumps({"command": "echo floor reached"}), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    decision = json.loads(check.stdout)
    assert decision["decision"] == "deny", decision
    assert "administrator" in decision["reasons"][0]
    # Control: the user's rule does allow what the admin did not deny.
    other = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "policy", "check", "run_terminal_command"]
        + [json.dumps({"command": "echo other"}), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(other.stdout)["decision"] == "allow"


# -- what a fixed part holds beyond the names admin.json sets (admin_config.held_settings) -------------------


def test_fixing_the_model_drops_the_users_models_sidebar_choice_and_v1_pass_through(
    dirs: tuple[Path, Path],
) -> None:
    user, _ = dirs
    own = {"name": "mine", "model": "my-own-model", "base_url": "http://127.0.0.1:9/v1"}
    write_json(
        user / "jupyter_server_config.json",
        {
            "HdspAgentApp": {
                **USER_LOOSENING,
                "models": [own],
                "allow_user_models": True,
                "v1_pass_through_models": True,
            }
        },
    )
    UserModelFile().save("http://127.0.0.1:9/v1", "saved-in-the-sidebar", None)  # model.json
    config = load_cli_config()
    assert (config.models, config.allow_user_models, config.v1_pass_through_models) == ([], False, False)
    assert {"model", "base_url", "models", "allow_user_models"} <= config.admin_fixed
    catalog = catalog_from_config(config)
    assert [(m.model, m.base_url) for m in catalog.models] == [("company-model", "http://127.0.0.1:8000/v1")]


def test_fixing_only_the_model_name_drops_the_users_base_url_too(dirs: tuple[Path, Path]) -> None:
    _, admin = dirs
    write_json(admin / "hdsp_agent" / "admin.json", {"model": "company-model"})
    config = load_cli_config()
    assert (config.model, config.base_url, config.allow_user_models) == ("company-model", "", False)


def test_the_admin_may_still_let_users_pick_their_own_models(dirs: tuple[Path, Path]) -> None:
    _, admin = dirs
    write_json(admin / "hdsp_agent" / "admin.json", {**ADMIN, "allow_user_models": True})
    assert load_cli_config().allow_user_models is True


def test_without_a_fixed_model_the_users_own_models_stand(dirs: tuple[Path, Path]) -> None:
    _, admin = dirs
    write_json(admin / "hdsp_agent" / "admin.json", {"deny_rules": ["x"]})
    config = load_cli_config()
    assert (config.model, config.allow_user_models) == ("my-own-model", True)
    assert config.admin_fixed == {"deny_rules"}


USER_AUDIT_OFF = {"audit_enabled": False, "audit_log_path": "/dev/null", "audit_log_backups": 1}


@pytest.mark.parametrize(
    ("admin_audit", "hub", "expected"),
    [
        # Neither the admin nor a hub holds it: the user's own choice.
        ({}, False, (False, "/dev/null", 1)),
        # Under JupyterHub the audit is on unless admin.json says otherwise ...
        ({}, True, (True, "", 5)),
        ({"audit_enabled": False}, True, (False, "", 5)),
        # ... and an admin who names it holds it without a hub, with the admin's own settings kept.
        ({"audit_enabled": True, "audit_log_backups": 9}, False, (True, "", 9)),
    ],
)
def test_the_users_config_cannot_switch_off_or_redirect_a_held_audit(
    dirs: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    admin_audit: dict[str, object],
    hub: bool,
    expected: tuple[bool, str, int],
) -> None:
    user, admin = dirs
    write_json(user / "jupyter_server_config.json", {"HdspAgentApp": USER_AUDIT_OFF})
    write_json(admin / "hdsp_agent" / "admin.json", admin_audit)
    if hub:
        monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    config = load_cli_config()
    assert (config.audit_enabled, config.audit_log_path, config.audit_log_backups) == expected


def test_quotas_and_v1_fixed_by_the_admin_hold_against_the_user(dirs: tuple[Path, Path]) -> None:
    user, admin = dirs
    loosening = {"daily_token_limit": 0, "max_concurrent_turns": 0, "v1_enabled": True}
    write_json(user / "jupyter_server_config.json", {"HdspAgentApp": loosening})
    fixed = {"daily_token_limit": 1000, "max_concurrent_turns": 1, "v1_enabled": False}
    write_json(admin / "hdsp_agent" / "admin.json", fixed)
    config = load_cli_config()
    assert {name: getattr(config, name) for name in fixed} == fixed
    # Without admin.json the same user settings are the user's (nothing to hold).
    assert HdspAgentConfig().v1_enabled is True


def test_the_cli_refuses_a_model_flag_under_a_fixed_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_dirs(tmp_path, monkeypatch, "JUPYTER_CONFIG_PATH")
    run = subprocess.run(
        [sys.executable, "-m", "hdsp_agent.cli", "run", "-p", "hi", "--root", str(tmp_path)]
        + ["--base-url", "http://127.0.0.1:9/v1"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "set by the administrator" in run.stderr, run.stderr
