#!/usr/bin/env python3
"""Mutation testing of the guards that keep bytes correct (`make mutants`, docs/testing.md).

Every guard (a fence comparison, a plan-bind check, a content combine check, an executor
status path, a Store manifest or object check) must have a test that fails without it.
This script breaks them one at a time and runs the tests that must notice:

- Rust: cargo-mutants over the files and test selections of tests/mutants/rust.json, in a
  scratch copy of the tree (target/mutants/tree; its crates built in the tree's target dir,
  so the dependencies are reused and each mutant rebuilds only its crate); the working
  tree is never mutated.
- Python: the mutations of tests/mutants/python.json (file, function, an exact snippet of
  that function's source, its replacement, the pytest selection that must fail), each
  applied to a scratch copy of the package (target/mutants/python) that the tests import
  through PYTHONPATH; the source tree is never written.

A mutant no test notices is a survivor unless tests/mutants/equivalent.json lists it with
a reason (a mutation that cannot change behaviour). Progress goes to stderr; the last
line on stdout is one JSON object: mutants, caught, survived, equivalent, unviable,
seconds. The exit status is non-zero when a mutant survived or a run could not be made.

    scripts/mutants.py                 # everything (make mutants)
    scripts/mutants.py --sample        # the fixed sample of make test
    scripts/mutants.py --only python   # or: rust
    scripts/mutants.py --list          # the mutants, nothing run
"""

from __future__ import annotations

import argparse
import ast
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "mutants"
# The Python packages a mutant's file names first: the binding and the runtime.
PACKAGES = {
    "weight_manifest": ROOT / "bindings" / "python" / "python" / "weight_manifest",
    "weight_manifest_runtime": ROOT / "runtime" / "weight_manifest_runtime",
}


def source_of(file: str) -> Path:
    """The source file of a mutant's ``file`` (``package/relative/path.py``)."""
    package, _, rest = file.partition("/")
    if package not in PACKAGES or not rest:
        raise SystemExit(f"tests/mutants/python.json: {file}: not under one of {sorted(PACKAGES)}")
    return PACKAGES[package] / rest


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


@dataclass
class Tally:
    """What the run found: one outcome per mutant."""

    caught: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    unviable: list[str] = field(default_factory=list)

    def merge(self, other: "Tally") -> None:
        for name in ("caught", "survived", "equivalent", "unviable"):
            getattr(self, name).extend(getattr(other, name))


def equivalents() -> dict[str, str]:
    """The reviewed equivalent mutants: name -> why it cannot change behaviour."""
    entries = json.loads((CONFIG / "equivalent.json").read_text())
    for e in entries:
        if not e.get("why"):
            raise SystemExit(f"tests/mutants/equivalent.json: {e.get('mutant')} has no reason")
    return {e["mutant"]: e["why"] for e in entries}


class Lock:
    """One run at a time: an exclusive flock on target/mutants.lock (released by the OS
    when the process ends, however it ends)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("w")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"another mutation run holds {path}; wait for it to finish")
        self.file.write(f"{os.getpid()}\n")
        self.file.flush()


# ---- Python ---------------------------------------------------------------------------


@dataclass
class PyMutant:
    """One mutation of the package's source, and the tests that must notice it."""

    id: str
    file: str
    function: str
    snippet: str
    replacement: str
    tests: list[str]

    @property
    def name(self) -> str:
        return f"python: {self.file}: {self.function}: {self.id}"


def python_mutants(sample: bool, match: Optional[str] = None) -> list[PyMutant]:
    entries = json.loads((CONFIG / "python.json").read_text())["mutants"]
    ids = [e["id"] for e in entries]
    if len(set(ids)) != len(ids):
        raise SystemExit("tests/mutants/python.json: duplicate ids")
    chosen = [e for e in entries if not sample or e.get("sample")]
    mutants = [PyMutant(e["id"], e["file"], e["function"], e["snippet"], e["replacement"], e["tests"]) for e in chosen]
    return [m for m in mutants if match is None or match in m.name]


def function_span(tree: ast.Module, qualified: str) -> Optional[tuple[int, int]]:
    """The (first, last) line of function ``qualified`` (``name`` or ``Class.name`` or
    ``outer.inner``) in ``tree``."""
    nodes: list[ast.AST] = [tree]
    found: Optional[ast.AST] = None
    for part in qualified.split("."):
        found = None
        for parent in nodes:
            for child in ast.iter_child_nodes(parent):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child.name == part:
                    found = child
        if found is None:
            return None
        nodes = [found]
    assert found is not None
    return found.lineno, found.end_lineno or found.lineno


def mutate(source: str, m: PyMutant) -> str:
    """``source`` with ``m.snippet`` replaced inside ``m.function``; the snippet must occur
    exactly once there, and the result must still parse."""
    span = function_span(ast.parse(source), m.function)
    if span is None:
        raise ValueError(f"{m.name}: no function {m.function} in {m.file}")
    lines = source.splitlines(keepends=True)
    before, body, after = "".join(lines[: span[0] - 1]), "".join(lines[span[0] - 1 : span[1]]), "".join(lines[span[1] :])
    if body.count(m.snippet) != 1:
        raise ValueError(f"{m.name}: the snippet occurs {body.count(m.snippet)} times in {m.function}, not once")
    mutated = before + body.replace(m.snippet, m.replacement) + after
    if mutated == source:
        raise ValueError(f"{m.name}: the replacement changes nothing")
    ast.parse(mutated)
    return mutated


def python_scratch() -> Path:
    """A copy of the packages' sources with the built native module of the installed
    wheel, under target/mutants/python: what every Python mutant is applied to."""
    probe = subprocess.run(
        [sys.executable, "-c", "import weight_manifest._native as n; print(n.__file__)"],
        capture_output=True, text=True, cwd="/")
    if probe.returncode != 0:
        raise SystemExit(f"the weight_manifest wheel is not installed ({probe.stderr.strip()}): run `make python-wheel`")
    native = Path(probe.stdout.strip())
    scratch = target_dir() / "mutants" / "python"
    shutil.rmtree(scratch, ignore_errors=True)
    for name, package in PACKAGES.items():
        shutil.copytree(package, scratch / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy2(native, scratch / "weight_manifest" / native.name)
    return scratch


def suites(tests: list[str]) -> dict[str, list[str]]:
    """``tests`` grouped by their suite's directory (``runtime/tests``, ``bindings/python/tests``):
    each suite has its own conftest and configuration, so pytest runs them apart."""
    grouped: dict[str, list[str]] = {}
    for test in tests:
        grouped.setdefault(test.split("::")[0].rsplit("/", 1)[0], []).append(test)
    return grouped


def run_suites(scratch: Path, tests: list[str], timeout: float) -> tuple[Optional[int], str]:
    """The first failing suite's exit code and last line, else the last suite's."""
    code: Optional[int] = 0
    tail = ""
    for selection in suites(tests).values():
        code, tail = run_pytest(scratch, selection, timeout)
        if code != 0:
            break
    return code, tail


def run_pytest(scratch: Path, tests: list[str], timeout: float) -> tuple[Optional[int], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(scratch), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--no-header", *tests]
    # Its own session, so that a mutant that hangs is stopped with every process its tests
    # started (a Store's master and holder).
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
    except BaseException as error:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=10)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        if isinstance(error, subprocess.TimeoutExpired):
            return None, "timeout"
        raise
    tail = (out.strip().splitlines() or [""])[-1]
    return process.returncode, tail


def run_python(sample: bool, known: dict[str, str], match: Optional[str] = None) -> Tally:
    tally = Tally()
    mutants = python_mutants(sample, match)
    scratch = python_scratch()
    where = subprocess.run([sys.executable, "-c", "import weight_manifest; print(weight_manifest.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(scratch)}, capture_output=True, text=True, cwd="/")
    if not where.stdout.strip().startswith(str(scratch)):
        raise SystemExit(f"the scratch package is not the one imported: {where.stdout or where.stderr}")
    originals: dict[str, str] = {}
    for m in mutants:
        originals.setdefault(m.file, source_of(m.file).read_text())
    # Every mutation applies (a snippet that no longer matches the source is an error of
    # the list, reported before anything runs).
    texts = {m.id: mutate(originals[m.file], m) for m in mutants}
    selections = sorted({t for m in mutants for t in m.tests})
    started = time.perf_counter()
    code, tail = run_suites(scratch, selections, 900)
    if code != 0:
        raise SystemExit(f"python baseline failed ({tail}): the tests must pass unmutated")
    baseline = time.perf_counter() - started
    say(f"python: baseline of {len(selections)} selections passed in {baseline:.1f} s; {len(mutants)} mutants")
    for i, m in enumerate(mutants, 1):
        path = scratch / m.file
        path.write_text(texts[m.id])
        try:
            clock = time.perf_counter()
            code, tail = run_suites(scratch, m.tests, max(60.0, 4 * baseline))
        finally:
            path.write_text(originals[m.file])
        verdict = "caught" if code in (1, None) else "survived" if code == 0 else "error"
        if verdict == "error":
            raise SystemExit(f"{m.name}: pytest exited {code} ({tail}): fix the mutant's test selection")
        if verdict == "survived" and m.name in known:
            verdict = "equivalent"
        getattr(tally, verdict).append(m.name)
        say(f"python [{i}/{len(mutants)}] {verdict:10} {time.perf_counter() - clock:5.1f} s  {m.file}: {m.function}: {m.id}")
    return tally


# ---- Rust -----------------------------------------------------------------------------


def sync_tree(tree: Path) -> None:
    """The tracked and untracked (not ignored) files of the working tree copied into
    ``tree``; unchanged files keep their times, so the scratch build stays incremental."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    wanted = {p for p in listed if p and (ROOT / p).is_file()}
    for rel in sorted(wanted):
        source, copy = ROOT / rel, tree / rel
        data = source.read_bytes()
        if copy.is_file() and copy.read_bytes() == data:
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(data)
        shutil.copymode(source, copy)
    for path in tree.rglob("*"):
        rel = path.relative_to(tree).as_posix()
        if path.is_file() and rel not in wanted and not rel.startswith(("mutants.out", ".git/")):
            path.unlink()


def strip_position(name: str) -> str:
    """A cargo-mutants mutant name without its line and column."""
    return re.sub(r"^([^:]+):\d+:\d+: ", r"\1: ", name)


def rust_groups(sample: bool) -> list[dict[str, Any]]:
    groups = json.loads((CONFIG / "rust.json").read_text())["groups"]
    return [g for g in groups if not sample or g.get("sample")]


def cargo_mutants_command(group: dict[str, Any], out: Path, sample: bool, listing: bool) -> list[str]:
    # The baseline runs: a test that fails unmutated would count every mutant as caught.
    command = ["cargo", "mutants", "--in-place", "--no-shuffle", "--colors", "never", "--cargo-arg=--locked",
               "--timeout", str(group.get("timeout", 180)), "--build-timeout", "600", "-o", str(out)]
    if group["package"] != "weight-manifest":
        command += ["--package", group["package"]]
    for f in group["files"]:
        command += ["--file", f]
    regexes = group.get("sample_re") if sample else group.get("re")
    for r in ([regexes] if isinstance(regexes, str) else regexes or []):
        command += ["--re", r]
    for r in group.get("exclude_re", []):
        command += ["--exclude-re", r]
    if listing:
        return [*command, "--list", "--line-col", "false"]
    # The test selection goes to the build too (--cargo-arg): each mutant then builds only
    # the test targets that run.
    return [*command, "--test-package", group["package"], *(f"--cargo-arg={a}" for a in group.get("cargo_test", []))]


def run_custom(tree: Path, env: dict[str, str], sample: bool, known: dict[str, str]) -> Tally:
    """The hand-written Rust mutations of rust.json's ``custom`` list (what cargo-mutants
    does not generate: a member dropped from a comparison), each applied to the scratch
    tree and restored before the next."""
    tally = Tally()
    entries = [e for e in json.loads((CONFIG / "rust.json").read_text()).get("custom", [])
               if not sample or e.get("sample")]
    for package, args in sorted({(e["package"], tuple(e["cargo_test"])) for e in entries}):
        baseline = subprocess.run(["cargo", "test", "--locked", "-q", "-p", package, *args], cwd=tree, env=env,
                                  capture_output=True, text=True)
        if baseline.returncode != 0:
            raise SystemExit(f"rust custom: the baseline `cargo test -p {package} {' '.join(args)}` fails:\n"
                             f"{baseline.stdout[-2000:]}{baseline.stderr[-2000:]}")
    for i, e in enumerate(entries, 1):
        name = f"{e['file']}: {e['id']}"
        path = tree / e["file"]
        original = path.read_text()
        if original.count(e["snippet"]) != 1:
            raise SystemExit(f"{name}: the snippet occurs {original.count(e['snippet'])} times in {e['file']}, not once")
        clock = time.perf_counter()
        path.write_text(original.replace(e["snippet"], e["replacement"]))
        try:
            test = ["cargo", "test", "--locked", "-q", "-p", e["package"], *e["cargo_test"]]
            built = subprocess.run([*test, "--no-run"], cwd=tree, env=env, capture_output=True, text=True)
            if built.returncode != 0:
                raise SystemExit(f"{name}: the mutant does not build:\n{built.stderr[-2000:]}")
            done = subprocess.run(test, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
        finally:
            path.write_text(original)
        verdict = "caught" if done.returncode != 0 else "equivalent" if name in known else "survived"
        getattr(tally, verdict).append(name)
        say(f"rust custom [{i}/{len(entries)}] {verdict:10} {time.perf_counter() - clock:5.1f} s  {name}")
    return tally


def run_rust(sample: bool, known: dict[str, str]) -> Tally:
    tally = Tally()
    mutants_dir = target_dir() / "mutants"
    tree = mutants_dir / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    sync_tree(tree)
    # The tree's own target dir: the dependencies are built already (the scratch tree's
    # crates are other packages to cargo, at another path, so nothing of the tree's own
    # build is replaced).
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir()), "CARGO_TERM_COLOR": "never"}
    say("rust: building the scratch tree's tests")
    tally.merge(run_custom(tree, env, sample, known))
    for group in rust_groups(sample):
        out = mutants_dir / "out" / group["name"]
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        clock = time.perf_counter()
        say(f"rust: {group['name']}: {' '.join(group['files'])}")
        # cargo-mutants restores each file it mutated, also on an interrupt; the tree is a
        # scratch copy in any case.
        done = subprocess.run(cargo_mutants_command(group, out, sample, False), cwd=tree, env=env,
                              stdout=sys.stderr, stderr=sys.stderr)
        outcomes_path = out / "mutants.out" / "outcomes.json"
        if not outcomes_path.is_file():
            raise SystemExit(f"rust: {group['name']}: cargo mutants wrote no outcomes (exit {done.returncode})")
        outcomes = json.loads(outcomes_path.read_text())
        baseline = [o["summary"] for o in outcomes["outcomes"] if o.get("scenario") == "Baseline"]
        if baseline != ["Success"]:
            raise SystemExit(f"rust: {group['name']}: the unmutated tests do not pass ({baseline}); "
                             f"see {out / 'mutants.out'}")
        for o in outcomes["outcomes"]:
            scenario = o.get("scenario")
            if not isinstance(scenario, dict) or "Mutant" not in scenario:
                continue
            name = strip_position(scenario["Mutant"]["name"])
            summary = o["summary"]
            if summary in ("CaughtMutant", "Timeout"):
                tally.caught.append(name)
            elif summary == "Unviable":
                tally.unviable.append(name)
            elif summary == "MissedMutant":
                (tally.equivalent if name in known else tally.survived).append(name)
            else:
                raise SystemExit(f"rust: {name}: unexpected outcome {summary}")
        say(f"rust: {group['name']} done in {time.perf_counter() - clock:.0f} s")
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", action="store_true", help="only the fixed sample (make test)")
    parser.add_argument("--only", choices=["rust", "python"], help="one language only")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--match", help="only the Python mutants whose name contains this")
    args = parser.parse_args()
    known = equivalents()
    if args.list:
        for m in python_mutants(args.sample, args.match) if args.only in (None, "python") else []:
            mutate(source_of(m.file).read_text(), m)
            print(m.name)
        custom = json.loads((CONFIG / "rust.json").read_text()).get("custom", [])
        for e in custom if args.only in (None, "rust") else []:
            if not args.sample or e.get("sample"):
                print(f"{e['file']}: {e['id']}")
        for group in rust_groups(args.sample) if args.only in (None, "rust") else []:
            listed = subprocess.run(cargo_mutants_command(group, target_dir() / "mutants" / "list", args.sample, True),
                                    cwd=ROOT, capture_output=True, text=True, check=True)
            sys.stdout.write(listed.stdout)
        return 0
    # Every mutation of the list still applies, also when only the sample runs: a snippet
    # that no longer matches its function is noticed on every run.
    for m in python_mutants(False):
        try:
            mutate(source_of(m.file).read_text(), m)
        except ValueError as error:
            raise SystemExit(f"tests/mutants/python.json: {error}") from None
    lock = Lock(target_dir() / "mutants.lock")
    started = time.perf_counter()
    tally = Tally()
    if args.only in (None, "python"):
        tally.merge(run_python(args.sample, known, args.match))
    if args.only in (None, "rust"):
        tally.merge(run_rust(args.sample, known))
    for name in tally.survived:
        say(f"SURVIVED: {name}")
    viable = len(tally.caught) + len(tally.survived) + len(tally.equivalent)
    print(json.dumps({"mutants": viable, "caught": len(tally.caught), "survived": len(tally.survived),
                      "equivalent": len(tally.equivalent), "unviable": len(tally.unviable),
                      "seconds": round(time.perf_counter() - started)}))
    del lock
    return 1 if tally.survived else 0


if __name__ == "__main__":
    sys.exit(main())
