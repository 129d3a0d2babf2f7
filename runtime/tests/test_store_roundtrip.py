"""Save to and restore from the real Mooncake Store across processes on 127.0.0.1
(examples/store-roundtrip): each run starts its own master, store holder and worker
processes. Every target checks every byte it holds against the synthetic model's defining
function, independently of the planner, the Store and the digests; the manifest written is
read back by upstream's own ``WeightManifest.from_json``. Each fault must fail with its
code, report nothing restored, and then a retry must verify; no process is left behind."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import ROOT, run_example, verified_example

EXAMPLE = ROOT / "examples" / "store-roundtrip" / "store_roundtrip.py"



def run(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    return run_example(EXAMPLE, *args)


def verified(*args: str) -> dict[str, Any]:
    return verified_example(EXAMPLE, *args)


@pytest.fixture(autouse=True, scope="module")
def store_imports() -> None:
    try:
        import mooncake.store  # noqa: F401
    except ImportError as error:
        pytest.fail(f"Mooncake Store does not import ({error}); `make python-venv` installs it "
                    "and Debian's libibverbs1, librdmacm1 and libnuma1")


def synthetic_bytes(size_mib: int, tp: int) -> int:
    """The synthetic model's bytes as a TP-``tp`` layout holds them: 8 layers of 12 H*H
    float32 words and an H norm, a 2 H*H embedding; each TP rank holds every norm."""
    h = 256
    while 4 * h * h * 98 < size_mib << 20:
        h += 256
    return 4 * (98 * h * h + 8 * h * tp)


def test_tp4_pp2_saved_and_restored_as_tp2_pp4_verifies_every_byte() -> None:
    result = verified()
    assert result["bytes"] == synthetic_bytes(512, 2) and result["bytes"] >= 512 << 20
    assert result["save_gib_per_s"] > 0 and result["restore_gib_per_s"] > 0 and result["raw_get_gib_per_s"] > 0
    assert result["raw_put_gib_per_s"] > 0
    # 8 sources, each at most a few packed objects of <= 64 MiB.
    assert 8 <= result["objects"] <= 32


def test_one_object_per_fragment_also_verifies() -> None:
    result = verified("--size-mib", "16", "--source", "tp2", "--target", "tp1", "--max-object-mib", "0", "--no-raw")
    # 8 layers x 5 tensors + the embedding, each stored box once: TP2 splits all but the norms.
    assert result["objects"] == 8 * 9 + 2


@pytest.mark.parametrize("layouts", [("tp1", "tp2,pp2"), ("tp2,dp2", "tp1,pp2")])
def test_other_layouts_verify(layouts: tuple[str, str]) -> None:
    verified("--size-mib", "8", "--source", layouts[0], "--target", layouts[1], "--no-raw")


FAULTS = {
    "missing-object": "store_object_missing",
    "short-object": "store_object_short",
    "manifest-digest": "store_manifest_digest_mismatch",
    "kill-save": "transfer_worker_lost",
    "master-stop": "transfer_failed",
    "corrupt": "store_verify_failed",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_fails_closed_and_a_retry_verifies(fault: str) -> None:
    code, result, stderr = run("--size-mib", "16", "--source", "tp2", "--target", "tp1", "--no-raw", "--fault", fault)
    assert code == 0, stderr[-3000:]
    assert result is not None
    assert result["fault_code"] == FAULTS[fault], stderr[-3000:]
    # The failed attempt reported nothing restored: the only restore report is the retry's.
    assert stderr.count("[store-roundtrip] restored") == 1
    assert result["verified"] is True
    if fault == "kill-save":
        # The save died before its manifest: a reader finds no manifest at all.
        assert result["restore_after_kill_code"] == "store_manifest_missing"
