"""An invalid_json rejection names where the text breaks: ``line`` (1-based), ``column``
(1-based, in characters) and byte ``offset`` (0-based); every other rejection has None
there. The message stays the reference's."""

from __future__ import annotations

import json
import pickle
from typing import Any, Callable

import pytest

import weight_manifest as wm

MESSAGE = "placement manifest is not valid JSON"


def rejection(build: Callable[[], Any]) -> wm.ManifestError:
    with pytest.raises(wm.ManifestError) as raised:
        build()
    return raised.value


def where(error: wm.ManifestError) -> tuple[Any, Any, Any]:
    return (error.line, error.column, error.offset)


def python_json(text: str) -> tuple[int, int, int]:
    """Where Python's own json module stops (byte offset of its character position)."""
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(text)
    error = raised.value
    return (error.lineno, error.colno, len(text[: error.pos].encode()))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{} x",
        '{"a":1,}',
        "[1,\n 2,\n ]",
        '{\r\n"a":\r\n}',
        '["é", "日本語" x]',
        '{"😀":1,\n "ß": [1, 2}',
        '["日本", "a\tb"]',
        '{\n  "fragments": [',
    ],
)
def test_structural_errors_are_located_where_python_json_stops(text: str) -> None:
    error = rejection(lambda: wm.PlacementManifest.from_json(text))
    assert (error.code, str(error), error.path) == ("invalid_json", MESSAGE, None)
    assert where(error) == python_json(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The first byte no JSON text could have there (by hand).
        ('{"a":tru', (1, 9, 8)),
        ('{"a":[1.]}', (1, 9, 8)),
        ('"\\ud800"', (1, 8, 7)),
        ('{\n  "é": "\\q"}', (2, 10, 12)),
        # Invalid UTF-8: the first byte of the first bad sequence.
        (b'{"model_id": "caf\xe9"}', (1, 18, 17)),
        (b'{\n "\xc3\xa9": "\xc3"}', (2, 8, 10)),
        # A str with a lone surrogate is encoded with it, which is not UTF-8.
        ('["\ud800"]', (1, 3, 2)),
    ],
)
def test_token_and_encoding_errors(text: Any, expected: tuple[int, int, int]) -> None:
    error = rejection(lambda: wm.PlacementManifest.from_json(text))
    assert (error.code, str(error), error.path) == ("invalid_json", MESSAGE, None)
    assert where(error) == expected


def test_other_rejections_have_none() -> None:
    for build in (
        lambda: wm.PlacementManifest.from_json("[]"),
        lambda: wm.PlacementManifest.from_json('{"a":NaN}'),
        lambda: wm.PlacementManifest.from_json('{"a":1,"a":2}'),
        lambda: wm.ParallelRank(tp="1"),
    ):
        error = rejection(build)
        assert error.code != "invalid_json"
        assert where(error) == (None, None, None)


def test_attributes_survive_pickling() -> None:
    error = rejection(lambda: wm.PlacementManifest.from_json("[1,\n  x]"))
    assert where(error) == (2, 3, 6)
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, str(again), where(again)) == ("invalid_json", MESSAGE, (2, 3, 6))
