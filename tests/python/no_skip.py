"""The rule of every Python test suite of the project (loaded by each suite's pytest
configuration as the plugin ``no_skip``): no test may skip, and a test that needs a package
of the test environment that is absent fails with the command that installs it."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

# What installs a package of the test environment: every one is pinned in the lock.
INSTALL = (
    "install the test environment: `make python-venv` (it runs `.venv/bin/python -m pip install "
    "--no-deps -r bindings/python/requirements.lock`)"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """No test of the suite may skip: a skip (an ``importorskip``, a ``skip`` mark) is
    reported as a failure with its reason, so a missing package is never silent."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"the test skipped ({reason}); no test may skip: {INSTALL}"


def require(module: str) -> Any:
    """The module ``module`` of the test environment, imported; a test that needs an absent
    one fails with the install command, never skips."""
    try:
        return importlib.import_module(module)
    except ImportError as missing:
        pytest.fail(f"{module} is not importable ({missing}): {INSTALL}")
