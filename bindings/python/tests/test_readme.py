"""The README's Python example runs as written."""

from __future__ import annotations

import re

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
