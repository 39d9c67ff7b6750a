"""The manifest's declared shape (issue 35, item 3): ``tuner.release.manifest.Manifest`` and its
nested TypedDicts declare every key a release writes, and every key they require is written;
:func:`read_manifest` refuses a file that is not a manifest, naming it."""

from __future__ import annotations

from typing import Any, get_type_hints, is_typeddict

import pytest

import tuner
from tests.tuner.conftest import write_config
from tuner.errors import InputError
from tuner.release.manifest import Constraint, Manifest, Partial, read_manifest


def _undeclared(kind: Any, written: dict[str, Any], where: str) -> list[str]:
    """Where ``written`` lacks a key ``kind`` requires or holds one it does not declare, in it
    and in the nested TypedDicts its fields name."""
    required, optional = set(kind.__required_keys__), set(kind.__optional_keys__)
    wrong = []
    if required - set(written):
        wrong.append(f"{where}: no {sorted(required - set(written))}, required")
    if set(written) - required - optional:
        wrong.append(f"{where}: {sorted(set(written) - required - optional)} not declared")
    hints = get_type_hints(kind)  # NotRequired[X] as X
    for key, value in written.items():
        if is_typeddict(hints.get(key)) and isinstance(value, dict):
            wrong += _undeclared(hints[key], value, f"{where}.{key}")
    return wrong


def _shape_problems(written: dict[str, Any]) -> list[str]:
    wrong = _undeclared(Manifest, written, "manifest")
    for name, entry in written["constraints"].items():  # dict[str, Constraint]
        wrong += _undeclared(Constraint, entry, f"manifest.constraints.{name}")
    return wrong


@pytest.mark.slow
@pytest.mark.parametrize("partial", [False, True], ids=["whole", "partial"])
def test_a_release_writes_the_keys_the_manifest_type_declares(tmp_path, partial):
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=1)
    if partial:  # two of Fair's columns synthesised, two sets; limits a tiny table passes
        text = path.read_text().replace(
            'output = "out"', 'output = "out"\nsynthesize = ["affairs", "religious"]\n'
            "synthetic_sets = 2").replace(
            "[risk]", "[risk]\nidentification_radius = 0.5\ncopy_limit = 0.5\n"
            "near_copy_limit = 0.5\nemr_limit = 0.5\ntmr_limit = 0.5")
        path.write_text(text)
    tuned = tuner.tune(path)
    written = tuned.manifest()
    assert written is not None
    assert not _shape_problems(dict(written))
    # what this version writes for such a release: the required keys and these
    assert set(written) == set(Manifest.__required_keys__) | {
        "randomness", "report", "selection", "audit", "fakes", "released_columns",
        "metadata_file", *(["partial"] if partial else [])}
    if partial:
        assert set(written["partial"]) == set(Partial.__required_keys__) | {"sha256"}


def test_the_checker_names_a_key_out_of_place():
    written = {"study": "s", "trial": 1, "synthesizer": "cart", "constraints": {
        "m": {"value": -0.1, "passed": True, "margin": 0.0}}, "gate": {"released_records": 3}}
    said = " ".join(_shape_problems(written))
    assert "manifest.constraints.m: ['margin'] not declared" in said
    assert "manifest.gate: no ['note', 'removed_records', 'replicated_uniques']" in said
    assert "manifest: no [" in said and "'created_utc'" in said


@pytest.mark.parametrize(("text", "said"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "a JSON list, not an object"),
    ('{"trial": 3, "study": "s"}', "it has no 'synthesizer' (keys: ['study', 'trial'])"),
])
def test_read_manifest_refuses_what_is_not_a_manifest_naming_the_file(tmp_path, text, said):
    path = tmp_path / "manifest.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_manifest(path)
    assert str(err.value).startswith(f"{path}: not a release manifest: ")
    assert said in str(err.value)


def test_read_manifest_reads_an_older_manifest_as_it_is(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text('{"study": "s", "trial": 3, "synthesizer": "cart", "seeds": {"study": 7}}')
    assert read_manifest(path) == {"study": "s", "trial": 3, "synthesizer": "cart",
                                   "seeds": {"study": 7}}
