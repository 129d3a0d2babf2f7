"""Every code block of the README and of the guides under docs/ runs in `make test`, as it
stands in the text (the README's own Python and Rust examples also have their own tests:
test_readme.py, scripts/rust-consumer.sh).

Each block runs by its language, in a fresh folder that holds `examples/`, `tests/` and
`schema/` of the repository (so the paths in the text resolve and nothing is written into
the tree), with the CLI built by `cargo build` first on PATH:

- `console`: each `$ command` runs in bash; what it prints (standard output, then standard
  error) must be the lines that follow it, exactly;
- `sh`: the block runs in `bash -euo pipefail`; a line `make TARGET ...` is run as `make -n`
  in the repository (the target must exist; running it is what `make test` itself does);
- `python`: the block runs as a script with this interpreter;
- `json`: the block parses as JSON (the rules file of docs/cli.md also through the
  adapter's reader: crates/adapt/tests/adapt_presets.rs);
- `rust`: a guide's Rust block is a doctest of the core (`src/lib.rs` includes the guide),
  the README's the program of scripts/rust-consumer.sh;
- `cpp`, `cmake`: the block is the out-of-tree consumer the C++ build compiles and runs
  (bindings/cpp/examples/consumer), line for line;
- `toml`: the block parses as TOML; `text`: prose-like output or a synopsis, not run.

A language outside this list fails the test, so no block is skipped silently.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, scratch_tmpdir

DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "contract.md")]
GUIDES = ["cli.md", "python.md", "weight-updates.md", "store.md", "mooncake.md", "cpp.md", "ray.md", "vllm.md", "lifecycle.md"]
FENCE = re.compile(r"^```([a-z]*)\n(.*?)^```\n", re.S | re.M)
CONSUMER = ROOT / "bindings" / "cpp" / "examples" / "consumer"


def blocks(path: Path) -> list[tuple[str, str, int]]:
    """(language, text, line) of every fenced block of `path`."""
    text = path.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


ALL = [(p, *b) for p in DOCS for b in blocks(p)]


@pytest.fixture(scope="module")
def cli_dir() -> Path:
    subprocess.run(["cargo", "build", "--locked", "-q", "-p", "weight-manifest-cli"], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug"


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    for name in ("examples", "tests", "schema"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def env(cli_dir: Path) -> dict[str, str]:
    # A TMPDIR of the session's: what a block makes there (tempfile.mkdtemp(), as a reader
    # would) is removed with it.
    return {**os.environ, "PATH": f"{cli_dir}{os.pathsep}{os.environ['PATH']}", "WEIGHT_MANIFEST_PROGRESS_DELAY_MS": "60000",
            **scratch_tmpdir("docs")}


def test_every_guide_exists_and_has_code() -> None:
    for name in GUIDES:
        assert any(p.name == name and blocks(p) for p in DOCS), name
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_every_block_has_a_language_this_test_runs() -> None:
    known = {"console", "sh", "python", "json", "rust", "cpp", "cmake", "toml", "text"}
    unknown = [f"{p.name}:{line} {lang or '(none)'}" for p, lang, _, line in ALL if lang not in known]
    assert not unknown, unknown


def ids(kind: str) -> list[object]:
    return [pytest.param(p, text, id=f"{p.name}:{line}") for p, lang, text, line in ALL if lang == kind]


@pytest.mark.parametrize("path,text", ids("console"))
def test_console_block(path: Path, text: str, cli_dir: Path, workdir: Path) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"{path.name}: output before the first command"
            commands[-1][1].append(line)
    assert commands
    for command, expected in commands:
        done = subprocess.run(["bash", "-c", command], cwd=workdir, env=env(cli_dir), capture_output=True,
                              text=True)
        got = (done.stdout + done.stderr).splitlines()
        assert got == expected, f"{path.name}: $ {command}"


@pytest.mark.parametrize("path,text", ids("sh"))
def test_sh_block(path: Path, text: str, cli_dir: Path, workdir: Path) -> None:
    script = []
    for line in text.splitlines():
        target = re.match(r"\s*make\s+(.*?)\s*(#.*)?$", line)
        script.append(f"make -n -C {ROOT} {target.group(1)} >/dev/null" if target else line)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(script)], cwd=workdir, env=env(cli_dir),
                          capture_output=True, text=True)
    assert done.returncode == 0, f"{path.name}:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("path,text", ids("python"))
def test_python_block(path: Path, text: str, cli_dir: Path, workdir: Path) -> None:
    script = workdir / "block.py"
    script.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=workdir, env=env(cli_dir), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{path.name}:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("path,text", ids("json"))
def test_json_block(path: Path, text: str) -> None:
    json.loads(text)


@pytest.mark.parametrize("path,text", ids("toml"))
def test_toml_block(path: Path, text: str) -> None:
    tomllib.loads(text)


def test_rust_blocks_are_compiled_and_run() -> None:
    lib = (ROOT / "src" / "lib.rs").read_text(encoding="utf-8")
    for path, lang, text, _ in ALL:
        if lang != "rust":
            continue
        if path.name == "README.md":
            readme = path.read_text(encoding="utf-8")
            marked = readme.split("<!-- rust-example:start -->", 1)[1].split("<!-- rust-example:end -->", 1)[0]
            assert text in marked, "the README's Rust block is the rust-consumer program"
        else:
            assert f'include_str!("../docs/{path.name}")' in lib, f"{path.name}: not a doctest of src/lib.rs"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_cpp_and_cmake_blocks_are_the_consumer_the_cpp_build_runs() -> None:
    main = _lines((CONSUMER / "main.cpp").read_text(encoding="utf-8"))
    cmake = {line.strip() for line in _lines((CONSUMER / "CMakeLists.txt").read_text(encoding="utf-8"))}
    found = {"cpp": 0, "cmake": 0}
    for path, lang, text, _ in ALL:
        if lang == "cpp":
            assert _lines(text) == main, f"{path.name}: the C++ block is not {CONSUMER}/main.cpp"
        elif lang == "cmake":
            missing = [line for line in _lines(text) if line.strip() and line.strip() not in cmake]
            assert not missing, f"{path.name}: not in the consumer's CMakeLists.txt: {missing}"
        else:
            continue
        found[lang] += 1
    assert found == {"cpp": 1, "cmake": 1}, found
