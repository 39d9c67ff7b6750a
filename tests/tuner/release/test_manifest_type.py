"""The manifest's declared shape (issue 35, item 3): ``tuner.release._manifest.Manifest`` and its
nested TypedDicts declare every key a release writes, and every key they require is written;
:func:`read_manifest` refuses a file that is not a manifest, naming it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_type_hints, is_typeddict

import pytest

import tuner
from tests.tuner.conftest import write_config
from tuner.errors import InputError
from tuner.release._manifest import Constraint, Manifest, Partial, read_manifest


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


# mypy checks ``m["key"]`` against the TypedDict but not ``m.get("key")`` (it accepts any string
# there), and the readers take keys older manifests may lack with ``.get``: this reads the
# readers' source and checks every literal key they take from a value typed as one of the
# manifest's TypedDicts, by subscript, ``.get`` or ``in``.
READERS = ("_summary", "_report", "_report_audit")


def _shapes() -> dict[str, Any]:
    import tuner.release._manifest as module

    return {name: kind for name, kind in vars(module).items() if is_typeddict(kind)}


def _typeddict_in(hint: Any) -> Any:
    """The TypedDict of a hint (``X``, ``X | None``, ``NotRequired[X]`` resolved), or None."""
    if is_typeddict(hint):
        return hint
    found = [a for a in getattr(hint, "__args__", ()) if is_typeddict(a)]
    return found[0] if len(found) == 1 and type(None) in hint.__args__ else None


def _keys_taken(source: str) -> list[tuple[int, str, str, Any]]:
    """(line, name, key, TypedDict) for each literal key taken from a name typed as a manifest
    TypedDict: parameters annotated so, and names bound to a typed value's key (``r =
    m["report"]``, ``gate, metrics = m.get("gate", {}), m.get("metrics", {})``)."""
    shapes = _shapes()
    out = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef):
            continue
        typed: dict[str, Any] = {}
        for arg in [*func.args.args, *func.args.kwonlyargs]:
            text = ast.unparse(arg.annotation) if arg.annotation else ""
            kind = shapes.get(text.removesuffix(" | None"))
            if kind is not None:
                typed[arg.arg] = kind

        def taken(node: ast.AST) -> tuple[str, str] | None:
            """(name, key) when ``node`` is ``name["key"]`` or ``name.get("key", ...)``."""
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                    and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                return node.value.id, node.slice.value
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and isinstance(node.func.value, ast.Name) \
                    and node.args and isinstance(node.args[0], ast.Constant):
                return node.func.value.id, str(node.args[0].value)
            return None

        for _ in range(3):  # names bound from typed names, a few levels deep
            for node in ast.walk(func):
                if not isinstance(node, ast.Assign):
                    continue
                pairs = [(node.targets[0], node.value)]
                if isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(node.targets[0].elts, node.value.elts, strict=False))
                for target, value in pairs:
                    got = taken(value)
                    if isinstance(target, ast.Name) and got and got[0] in typed:
                        hint = get_type_hints(typed[got[0]]).get(got[1])
                        if (kind := _typeddict_in(hint)) is not None:
                            typed[target.id] = kind
        for node in ast.walk(func):
            got = taken(node)
            if got and got[0] in typed:
                out.append((node.lineno, got[0], got[1], typed[got[0]]))
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) \
                    and isinstance(node.left, ast.Constant) \
                    and isinstance(node.comparators[0], ast.Name) \
                    and node.comparators[0].id in typed:
                out.append((node.lineno, node.comparators[0].id, str(node.left.value),
                            typed[node.comparators[0].id]))
    return out


def _undeclared_keys(source: str) -> list[str]:
    return [f"line {line}: {name}[{key!r}] is no key of {kind.__name__}"
            for line, name, key, kind in _keys_taken(source)
            if key not in kind.__required_keys__ | kind.__optional_keys__]


@pytest.mark.parametrize("reader", READERS)
def test_the_readers_take_only_keys_the_manifest_declares(reader):
    path = Path(tuner.__file__).parent / "release" / f"{reader}.py"
    source = path.read_text()
    assert len(_keys_taken(source)) >= 3, reader  # the reader does read typed values
    assert not _undeclared_keys(source), (path, _undeclared_keys(source))


def test_the_key_check_sees_a_misspelt_key_in_each_form():
    source = '''
def lines(m: Manifest, chosen: Selection | None) -> None:
    gate, r = m.get("gate", {}), m["report"]
    a = m.get("gaet")
    b = gate["released_recrods"]
    c = r.get("trials_rnu")
    d = "rul" in chosen
    e = m["trial"], gate.get("note"), r["rows"], chosen["reason"]
'''
    said = _undeclared_keys(source)
    assert said == ["line 4: m['gaet'] is no key of Manifest",
                    "line 5: gate['released_recrods'] is no key of Gate",
                    "line 6: r['trials_rnu'] is no key of ReportData",
                    "line 7: chosen['rul'] is no key of Selection"], said
