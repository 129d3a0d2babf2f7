"""mooncake/: Mooncake's formats (contract §20) as corpus operations: `mooncake.validate`
(a `WeightPlacementManifest` read by §20.3 and written by §20.5) and `mooncake.storage` (a
Store `WeightManifest`, §20.6).

The expectations are upstream's own answers, recorded in `tests/mooncake/corpus/` by
`tests/mooncake/generate.py` with upstream's wheel (`mooncake.reshard` 0.3.13; its `--check`
runs in `make test`): for an accepted text the bytes upstream writes back and its ids, for a
rejected one the code its message maps to and, where the mutation itself says which value
it broke, the pointer. This module only renders them as fixtures (standard library only).
The text goes in the input member `mooncake` (not `document`): a rejection's pointer is
compared where upstream's record gives one.
"""

from __future__ import annotations

import json
import re

from cases.common import _add
from oracle.core import ROOT

CORPUS = ROOT / "tests" / "mooncake" / "corpus"


def _case_id(kind: str, upstream_id: str) -> str:
    name = re.sub(r"[^a-z0-9.-]+", "-", upstream_id.lower()).strip("-")
    return f"mooncake/{kind}-{name}"


def cases_mooncake() -> None:
    placement = json.loads((CORPUS / "placement.json").read_text(encoding="utf-8"))["cases"]
    storage = json.loads((CORPUS / "storage.json").read_text(encoding="utf-8"))["cases"]
    assert len(placement) >= 200 and len(storage) >= 100, "the Mooncake oracle corpus is missing"
    for kind, op, cases in (("placement", "mooncake.validate", placement), ("storage", "mooncake.storage", storage)):
        for case in cases:
            expect = case["expect"]
            if expect["ok"]:
                if op == "mooncake.validate":
                    result = {k: expect[k] for k in ("canonical", "placement_id", "digest", "topology_id")}
                else:
                    result = {"mooncake_text": expect["text"], "digest": expect["digest"]}
                out = {"ok": True, **result}
                description = f"Upstream's wheel accepts {case['id']}: the bytes it writes back and its ids."
            else:
                out = {"ok": False, "code": expect["code"]}
                if "pointer" in expect:
                    out["path"] = expect["pointer"]
                message = expect["upstream_message"].replace("\n", " ")[:160]
                description = f"Upstream's wheel rejects {case['id']} ({message!r})."
                if not description.endswith("."):
                    description += "."
            _add(_case_id(kind, case["id"]), op, description, {"mooncake": case["input"]}, out, ("mooncake",))
