"""The README: its install lines and first use come before anything about CI, the install
lines name what the tree builds, and its Python example runs as written."""

from __future__ import annotations

import re
import tomllib

import pytest

from conftest import ROOT


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # its paths are relative to the repository root
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    assert len(blocks[0].strip().splitlines()) <= 15  # the issue asks for a 15-line example
    exec(compile(blocks[0], "README.md", "exec"), {})


def test_readme_install_lines_name_what_the_tree_builds() -> None:
    """The install lines (not run: they would build the wheel and the CLI again) name the
    binding's and the runtime's pip-installable projects, the crate that builds the `weight-manifest` command, and the
    core library at its repository."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    assert readme.index("\n## Install\n") < readme.index("make test")  # before anything about CI
    lines = re.findall(r"```text\n(.*?)```", section, flags=re.S)[0].splitlines()
    pip = [line.split()[2].strip('"').split("[")[0] for line in lines if line.startswith("pip install ")]
    assert len(pip) == 2
    projects = [tomllib.loads((ROOT / p / "pyproject.toml").read_text(encoding="utf-8")) for p in pip]
    assert projects[0]["build-system"]["build-backend"] == "maturin"
    assert projects[0]["project"]["name"] == "weight-manifest"
    # The runtime: its own distribution, on the binding, every extra the line names declared.
    runtime = projects[1]["project"]
    assert runtime["name"] == "weight-manifest-runtime"
    assert any(d.startswith("weight-manifest==") for d in runtime["dependencies"])
    extras = lines[[i for i, line in enumerate(lines) if line.startswith("pip install ")][1]].split("[")[1].split("]")[0]
    assert set(extras.split(",")) <= set(runtime["optional-dependencies"])
    cli = [line.split() for line in lines if line.startswith("cargo install --path ")]
    assert len(cli) == 1 and "--locked" in cli[0]
    manifest = tomllib.loads((ROOT / cli[0][3] / "Cargo.toml").read_text(encoding="utf-8"))
    assert [b["name"] for b in manifest["bin"]] == ["weight-manifest"]
    core = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    assert "cargo add weight-manifest --path" in section.replace("\n", " ")
    dependency = tomllib.loads(re.findall(r"```toml\n(.*?)```", section, flags=re.S)[0])["dependencies"]
    assert dependency == {core["package"]["name"]: {"git": core["workspace"]["package"]["repository"]}}


def test_readme_first_use_is_at_most_ten_lines_before_ci() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## First use\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```[a-z]+\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1 and len(blocks[0].splitlines()) <= 10
    assert readme.index("\n## First use\n") < readme.index("make test")
