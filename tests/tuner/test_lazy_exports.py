"""A lazy room's exports (tuner/_common/lazy_exports.py): read from their module at each use."""

from __future__ import annotations

import pytest

import tuner.scoring
import tuner.scoring._evaluation


def test_a_name_patched_in_its_module_is_patched_through_the_room(monkeypatch):
    real = tuner.scoring.evaluate
    assert real is tuner.scoring._evaluation.evaluate

    def stand_in(*args: object, **kwargs: object) -> None:
        return None

    monkeypatch.setattr(tuner.scoring._evaluation, "evaluate", stand_in)
    assert tuner.scoring.evaluate is stand_in  # never cached in the room
    monkeypatch.undo()
    assert tuner.scoring.evaluate is real


def test_a_name_the_room_does_not_offer_is_an_attribute_error_naming_the_room():
    with pytest.raises(AttributeError, match="module 'tuner.scoring' has no attribute 'nonsense'"):
        tuner.scoring.nonsense  # noqa: B018
