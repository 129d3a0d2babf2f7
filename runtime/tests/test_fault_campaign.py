"""The seeded share of the fault campaign that `make test` runs (the whole campaign is
`make fault-campaign`): every invariant holds over a fixed seed's faults, of every kind,
some in processes of their own; and a trial is drawn the same from its seed and number
alone (what makes a failing seed reproduce)."""

from __future__ import annotations

from pathlib import Path

from fault_campaign import KINDS, Trial, run_campaign

SEED = 35


def test_a_seeded_share_of_the_campaign_keeps_every_invariant() -> None:
    result = run_campaign(80, SEED, process_share=0.05, progress=False)
    assert result["faults"] >= 80 and set(result["by_kind"]) == set(KINDS), result
    assert result["process_trials"] >= 1 and result["detected"] >= 20, result
    broken = {k: result[k] for k in ("mixed_activations", "lost", "unrecovered", "undetected_corruptions",
                                     "unreported", "unrestorable", "left_running", "crashed")}
    assert broken == dict.fromkeys(broken, 0), result


def test_a_trial_is_drawn_from_its_seed_and_number_alone(tmp_path: Path) -> None:
    for index in (3, 17):
        one, two = (Trial(SEED, index, tmp_path / f"{index}-{k}", False) for k in range(2))
        try:
            assert one.faults == two.faults and one.mode == two.mode and one.world.model == two.world.model
            assert all((a.view("u4") == b.view("u4")).all() for a, b in zip(one.world.generations[2].values(),
                                                      two.world.generations[2].values()))
        finally:
            one.close(), two.close()
