"""The manifest's declared shape (issue 35, item 3): ``tuner.release._manifest.Manifest`` and its
nested TypedDicts declare every key a release writes, and every key they require is written;
:func:`read_manifest` refuses a file that is not a manifest, naming it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

import pytest

import tuner
from tests.tuner.conftest import write_config
from tuner.errors import InputError
from tuner.release._manifest import (
    Constraint,
    Manifest,
    Partial,
    _lacking,
    checked,
    read_manifest,
)


def _undeclared(kind: Any, written: dict[str, Any], where: str) -> list[str]:
    """Where ``written`` holds a key ``kind`` does not declare, in it and in the nested
    TypedDicts its fields name (the keys it lacks are :func:`_lacking`'s, the reader's own)."""
    declared = set(kind.__required_keys__) | set(kind.__optional_keys__)
    wrong = ([f"{where}: {sorted(set(written) - declared)} not declared"]
             if set(written) - declared else [])
    hints = get_type_hints(kind)  # NotRequired[X] as X
    for key, value in written.items():
        if is_typeddict(hints.get(key)) and isinstance(value, dict):
            wrong += _undeclared(hints[key], value, f"{where}.{key}")
    return wrong


def _shape_problems(written: dict[str, Any]) -> list[str]:
    wrong = [f"manifest lacks {key}" for key in _lacking(written, Manifest)]
    wrong += _undeclared(Manifest, written, "manifest")
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
    assert checked(dict(written)) == written  # every key a reader may subscript is there
    # what this version writes for such a release: the required keys, and partial synthesis's
    assert set(written) == set(Manifest.__required_keys__) | ({"partial"} if partial else set())
    if partial:
        assert set(written["partial"]) == set(Partial.__required_keys__) | {"sha256"}


def test_the_checker_names_a_key_out_of_place():
    written = {"study": "s", "trial": 1, "synthesizer": "cart", "constraints": {
        "m": {"margin": -0.1, "passed": True, "margni": 0.0}}, "gate": {"released_records": 3}}
    said = " ".join(_shape_problems(written))
    assert "manifest.constraints.m: ['margni'] not declared" in said
    for key in ("gate.note", "gate.removed_records", "gate.replicated_uniques", "created_utc"):
        assert f"manifest lacks {key}" in said


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


def test_read_manifest_refuses_a_manifest_that_lacks_a_required_key(tmp_path):
    # 0.1.0 is the first release: no reader makes do without a key the type requires
    path = tmp_path / "manifest.json"
    path.write_text('{"study": "s", "trial": 3, "synthesizer": "cart", "seeds": {"study": 7}}')
    with pytest.raises(InputError, match=r"not a whole release manifest: it lacks created_utc, "
                                         r"synthetic_sha256, .* and \d+ more"):
        read_manifest(path)


def test_every_key_a_manifest_lacks_is_named_to_its_depth():
    written = {"study": "s", "trial": 1, "synthesizer": "cart", "report": [],
               "gate": {"released_records": 3, "removed_records": 0, "replicated_uniques": "x"},
               "constraints": {"m": {"margin": -0.1, "passed": True}, "dcr": {"margin": 0.1}}}
    lacking = _lacking(written, Manifest)
    assert {"gate.note", "constraints.dcr.passed", "report (not an object)",
            "created_utc", "audit"} <= set(lacking)
    assert not any(k.startswith(("constraints.m.", "gate.released")) for k in lacking)


# mypy checks ``m["key"]`` against the TypedDict but not ``m.get("key")`` (it accepts any string
# there), and the readers take the keys some releases lack with ``.get``: this reads the
# readers' source and checks every literal key they take from a value typed as one of the
# manifest's TypedDicts, by subscript, ``.get``, ``in`` or ``not in``. A value is typed when it
# is a parameter annotated so, ``read_manifest(...)``, a key of a typed value (chained, or bound
# to a name by ``=``, an annotation, ``:=``, ``or``, or a loop over a ``dict[str, TypedDict]``'s
# ``items()`` or ``values()``). Not seen: keys held in variables, values passed through calls
# other than ``read_manifest``, and unannotated parameters.
READERS = ("_summary", "_report", "_report_audit", "_export")


def _shapes() -> dict[str, Any]:
    import tuner.release._manifest as module

    return {name: kind for name, kind in vars(module).items() if is_typeddict(kind)}


def _shape_of(hint: Any) -> Any:
    """A TypedDict, ("map", TypedDict) for ``dict[str, TypedDict]``, or None; ``X | None`` and
    ``NotRequired[X]`` as ``X``."""
    if is_typeddict(hint):
        return hint
    if get_origin(hint) is dict and is_typeddict(get_args(hint)[1]):
        return ("map", get_args(hint)[1])
    inner = [s for a in get_args(hint) if a is not type(None) and (s := _shape_of(a))]
    return inner[0] if len(inner) == 1 and type(None) in get_args(hint) else None


class _Reads:
    """The literal keys one function takes from typed values."""

    def __init__(self, func: ast.FunctionDef, shapes: dict[str, Any]) -> None:
        self.shapes, self.names = shapes, {}
        for arg in [*func.args.args, *func.args.kwonlyargs]:
            if (kind := self._annotated(arg.annotation)) is not None:
                self.names[arg.arg] = kind
        for _ in range(4):  # names bound from typed values, a few levels deep
            for node in ast.walk(func):
                self._bind(node)
        self.keys = {(n.lineno, *got) for n in ast.walk(func) if (got := self._taken(n))}

    def _annotated(self, annotation: ast.expr | None) -> Any:
        text = ast.unparse(annotation) if annotation is not None else ""
        return self.shapes.get(text.removesuffix(" | None"))

    def type_of(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return self.type_of(node.values[0])
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "read_manifest":
            return self.shapes["Manifest"]
        got = self._key_of(node)
        if got is None:
            return None
        base, key = got
        if isinstance(base, tuple):  # dict[str, TypedDict]: any key
            return base[1]
        return _shape_of(get_type_hints(base).get(key)) if key is not None else None

    def _key_of(self, node: ast.expr) -> tuple[Any, str | None] | None:
        """(the type read from, the literal key or None) for ``x[k]`` or ``x.get(k, ...)``."""
        if isinstance(node, ast.Subscript):
            value, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args:
            value, key = node.func.value, node.args[0]
        else:
            return None
        base = self.type_of(value)
        if base is None:
            return None
        literal = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) \
            else None
        return base, literal

    def _taken(self, node: ast.AST) -> tuple[str, Any] | None:
        if isinstance(node, (ast.Subscript, ast.Call)):
            got = self._key_of(node)
            if got and got[1] is not None and is_typeddict(got[0]):
                return got[1], got[0]
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            kind = self.type_of(node.comparators[0])
            if is_typeddict(kind):
                return node.left.value, kind
        return None

    def _bind(self, node: ast.AST) -> None:
        pairs: list[tuple[ast.expr, Any]] = []
        if isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                pairs = [(t, self.type_of(v)) for t, v in zip(target.elts, value.elts,
                                                               strict=False)]
            else:
                pairs = [(target, self.type_of(value))]
        elif isinstance(node, ast.AnnAssign):
            kind = self._annotated(node.annotation)
            pairs = [(node.target, kind if kind is not None
                      else self.type_of(node.value) if node.value else None)]
        elif isinstance(node, ast.NamedExpr):
            pairs = [(node.target, self.type_of(node.value))]
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Call) \
                and isinstance(node.iter.func, ast.Attribute):
            mapping = self.type_of(node.iter.func.value)
            if isinstance(mapping, tuple):
                if node.iter.func.attr == "values":
                    pairs = [(node.target, mapping[1])]
                elif node.iter.func.attr == "items" and isinstance(node.target, ast.Tuple):
                    pairs = [(node.target.elts[1], mapping[1])]
        for target, kind in pairs:
            if isinstance(target, ast.Name) and kind is not None:
                self.names[target.id] = kind


def _keys_taken(source: str) -> list[tuple[int, str, Any]]:
    """(line, key, TypedDict) for each literal key ``source`` takes from a typed value."""
    shapes = _shapes()
    found = {k for func in ast.walk(ast.parse(source)) if isinstance(func, ast.FunctionDef)
             for k in _Reads(func, shapes).keys}
    return sorted(found, key=lambda k: (k[0], k[1]))


def _undeclared_keys(source: str) -> list[str]:
    return [f"line {line}: {key!r} is no key of {kind.__name__}"
            for line, key, kind in _keys_taken(source)
            if key not in kind.__required_keys__ | kind.__optional_keys__]


@pytest.mark.parametrize("reader", READERS)
def test_the_readers_take_only_keys_the_manifest_declares(reader):
    path = Path(tuner.__file__).parent / "release" / f"{reader}.py"
    source = path.read_text()
    assert len(_keys_taken(source)) >= 5, reader  # the reader does read typed values
    assert not _undeclared_keys(source), (path, _undeclared_keys(source))


def test_the_key_check_sees_a_misspelt_key_in_each_form():
    source = '''
def lines(m: Manifest, chosen: Selection | None) -> None:
    gate, r = m.get("gate", {}), m["report"]
    a = m.get("gaet")
    b = gate["released_recrods"]
    c = r.get("trials_rnu")
    d = "rul" in chosen
    e = m["split"].get("n_audti")
    f = (m.get("partial") or {})["kpet"]
    g: Gate = m["gate"]
    h = g.get("noet")
    if (s := m.get("selection")) and "frnot" not in s:
        pass
    for name, v in m["constraints"].items():
        v.get("passde")
    i = [v["valeu"] for v in m["constraints"].values()]
    j = read_manifest(path).get("auidt")
    ok = m["trial"], gate.get("note"), r["rows"], chosen["reason"], m["split"]["n_train"]
'''
    said = _undeclared_keys(source)
    assert said == ["line 4: 'gaet' is no key of Manifest",
                    "line 5: 'released_recrods' is no key of Gate",
                    "line 6: 'trials_rnu' is no key of ReportData",
                    "line 7: 'rul' is no key of Selection",
                    "line 8: 'n_audti' is no key of SplitInfo",
                    "line 9: 'kpet' is no key of Partial",
                    "line 11: 'noet' is no key of Gate",
                    "line 12: 'frnot' is no key of Selection",
                    "line 15: 'passde' is no key of Constraint",
                    "line 16: 'valeu' is no key of Constraint",
                    "line 17: 'auidt' is no key of Manifest"], said
