"""The project's shape: three layers, no import circle, public APIs only, `risk` standalone.

experiments -> tuner -> risk. ``risk`` imports numpy, pandas, scipy and scikit-learn only;
nothing outside ``risk`` uses its private modules; no module imports another that (directly or
through others) imports it back, counting imports inside functions; importing a package changes
no global state (environment, warnings filters, root logging).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("risk", "tuner", "experiments")
MAX_LINES = 400  # STYLE: a module over ~400 lines is a sign to split


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at top level or inside functions (absolute names)."""
    return _imports_of(path.read_text(), path)


def _imports_of(source: str, path: Path) -> set[str]:
    """Every module ``source`` imports, read as the file ``path``."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    return {m: {d for d in _imports(p) if d in modules and d != m and not m.startswith(d + ".")}
            for m, p in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle found by a depth-first search (each as the list of its modules)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_cycle_finder_finds_a_circle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    assert find_cycles(_graph()) == []


def test_layers_and_public_api_only():
    for path in (ROOT / "risk").rglob("*.py"):
        bad = {m for m in _imports(path) if m.split(".")[0] in
               ("tuner", "experiments", "sdv", "optuna", "mlflow", "torch", "sdmetrics")}
        assert not bad, (path, bad)
    for pkg in ("tuner", "experiments"):
        for path in (ROOT / pkg).rglob("*.py"):
            private = {m for m in _imports(path) if m.startswith("risk._")}
            assert not private, (path, private)
            if pkg == "tuner":
                assert not {m for m in _imports(path) if m.startswith("experiments")}, path


def test_modules_are_short():
    long = {str(p.relative_to(ROOT)): n for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "sdv", "optuna", "mlflow", "sdmetrics", "matplotlib",
                                  "tuner", "ctgan", "rdt", "copulas"}:
            raise ImportError(f"{name} is not available in a core install")
        return None
sys.meta_path.insert(0, Block())
"""


def test_risk_runs_every_measure_without_the_tuner_dependencies():
    # A core install has numpy, pandas, scipy and scikit-learn only: every measure must work
    # with the tuner's dependencies made unimportable.
    script = BLOCKER + textwrap.dedent("""
    import numpy as np, pandas as pd
    import risk
    rng = np.random.default_rng(0)
    def frame(n):
        return pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.integers(0, 4, n),
                             "c": rng.normal(size=n).round(1), "t": rng.choice(["p", "q"], n)})
    train, holdout, syn = frame(300), frame(300), frame(300)
    done = []
    m = risk.membership_disclosure(train, holdout, syn, population_size=10_000,
                                   random_state=0, repeats=5)
    done.append(m)
    done.append(risk.risk_utility_loss(m.m, 0.8))
    done.append(risk.cap(train, syn, keys=["a", "b"], target="t", holdout=holdout))
    done.append(risk.attribute_inference(train, syn, keys=["a", "b"], target="t",
                                         random_state=0))
    done.append(risk.identification_risk(train, [train.assign(t=syn["t"])], keys=["a", "b"],
                                         synthesized=["t"]))
    done.append(risk.hellinger_utility(train, syn))
    done.append(risk.membership_audit(train, holdout, lambda t, s: syn.sample(len(t),
                                      random_state=s), targets=2, shadows=8, shadow_size=50,
                                      random_state=0))
    done.append(risk.disclosure(train, syn, keys=["a", "b"], target="t"))
    done.append(risk.exact_copies(train, syn, holdout=holdout))
    done.append(risk.distance_to_closest_record(train, syn, holdout=holdout, random_state=0))
    assert not {m for m in sys.modules if m.split(".")[0] in {"torch", "sdv", "optuna",
                                                              "mlflow", "tuner"}}
    print(len(done))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.split()[-1]) == 10  # every call above ran: none skipped


@pytest.mark.parametrize("package", ["risk", "tuner"])
@pytest.mark.slow
def test_import_has_no_side_effects(package):
    modules = sorted(_module_name(p) for p in (ROOT / package).rglob("*.py")
                     if p.name != "__main__.py")
    script = textwrap.dedent(f"""
    import importlib, logging, os, warnings
    import numpy, pandas, sklearn, scipy  # third-party state is not ours to judge
    for lib in ("optuna", "sdv", "mlflow", "matplotlib", "torch", "sdmetrics"):
        try:
            importlib.import_module(lib)
        except ImportError:
            pass
    env, filters = dict(os.environ), list(warnings.filters)
    root = (logging.getLogger().level, list(logging.getLogger().handlers))
    for name in {modules!r}:
        importlib.import_module(name)
    assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())
    assert list(warnings.filters) == filters, "warnings filters changed"
    assert (logging.getLogger().level, list(logging.getLogger().handlers)) == root
    print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_study_and_trial_attribute_keys_are_declared_in_one_module():
    # a key written in one module and read in another must be one string: tuner/_common/attrs.py
    bare = re.compile(r"""(set_user_attr|user_attrs\.get|user_attrs\[)\(?\s*(["'])""")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "tuner").rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if bare.search(line)]
    assert not found, found


# tuner's rooms from the bottom up: a module may import its own floor and those below it only
TUNER_FLOORS = {
    0: ("tuner.errors", "tuner._common", "tuner.data"),
    1: ("tuner.measures",),
    2: ("tuner.synthesis",),
    3: ("tuner.config",),
    4: ("tuner.scoring",),
    5: ("tuner.search",),
    6: ("tuner.release",),
    7: ("tuner.api", "tuner.cli", "tuner.dashboard", "tuner.__main__", "tuner"),
}
ROOMS = ("config", "data", "measures", "synthesis", "scoring", "search", "release")
LAZY_ROOMS = ("synthesis", "scoring", "search", "release")  # exports imported on first use
# every module inside a room is private (_name): the room's __init__ says what it offers
MAX_TOP_LEVEL = 8  # modules at tuner/'s top level; the rest live in rooms


def _floor(module: str) -> int:
    found = [(len(p), f) for f, prefixes in TUNER_FLOORS.items() for p in prefixes
             if module == p or module.startswith(p + ".")]
    assert found, f"{module} is in no room of TUNER_FLOORS: add it"
    return max(found)[1]  # the longest prefix decides ("tuner" is the front door only)


def test_tuner_rooms_import_downwards_only():
    graph = _graph()
    tuner = {m: deps for m, deps in graph.items() if m.split(".")[0] == "tuner"}
    assert len(tuner) > 40
    upward = [(m, d, _floor(m), _floor(d)) for m, deps in tuner.items() for d in deps
              if d.startswith("tuner") and _floor(d) > _floor(m)]
    assert not upward, upward


def test_each_room_says_what_it_offers_and_offers_it():
    import importlib

    for room in ROOMS:
        module = importlib.import_module(f"tuner.{room}")
        assert module.__doc__ and len(module.__doc__.split()) > 20, room
        assert module.__all__, room
        for name in module.__all__:
            assert getattr(module, name) is not None, (room, name)


def test_experiments_use_what_the_rooms_export():
    rooms = ("tuner.synthesis.", "tuner.scoring.", "tuner.search.", "tuner.release.",
             "tuner.measures.")
    inside = [(str(p.relative_to(ROOT)), m) for p in sorted((ROOT / "experiments").rglob("*.py"))
              for m in _imports(p) if m.startswith(rooms) and
              m.count(".") >= 2 and not _is_export(m)
              and (str(p.relative_to(ROOT)), m) not in INSIDE_ALLOWED]
    assert not inside, inside


# the one reach inside a room: the benchmark pins the product's torch threads per worker to the
# other methods' one thread, a module global that only patching the module can change
INSIDE_ALLOWED = {("experiments/tuner_benchmark/methods.py", "tuner.search._study")}


def _is_export(name: str) -> bool:
    """``tuner.ROOM.NAME`` where NAME is one of the room's exports (not one of its modules)."""
    import importlib

    room, _, leaf = name.rpartition(".")
    if room.count(".") != 1:
        return False
    return leaf in getattr(importlib.import_module(room), "__all__", ())


def test_tuner_top_level_holds_few_modules_and_the_rest_lives_in_rooms():
    top = sorted(p.name for p in (ROOT / "tuner").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top
    rooms = {p.name for p in (ROOT / "tuner").iterdir() if (p / "__init__.py").exists()}
    assert rooms == {*ROOMS, "_common"}, rooms
    public = [f"tuner/{room}/{p.name}" for room in ROOMS
              for p in (ROOT / "tuner" / room).glob("*.py") if not p.name.startswith("_")]
    assert not public, public  # a room's modules are private; its __init__ exports


def _reaches(where: str, imports: set[str]) -> list[tuple[str, str]]:
    """The imports of file ``where`` (relative to the root) that reach into another room's
    private modules, less INSIDE_ALLOWED."""
    own = _module_name(ROOT / where)
    rooms = [f"tuner.{r}" for r in ROOMS]
    return [(where, m) for m in sorted(imports) for room in rooms
            if m.startswith(room + "._") and own != room and not own.startswith(room + ".")
            and (where, m) not in INSIDE_ALLOWED]


def test_other_rooms_and_experiments_import_a_room_through_its_init():
    # a room exports what it offers; its _modules are its own (tests may look inside, and the
    # benchmark's one reach is INSIDE_ALLOWED). tuner._common is the project's own: experiments
    # use its seeds, quiet logging and figures; it is no user's API (not exported by tuner)
    files = [*(ROOT / "tuner").rglob("*.py"), *(ROOT / "experiments").rglob("*.py")]
    reach = [r for p in files for r in _reaches(str(p.relative_to(ROOT)), _imports(p))]
    assert not reach, reach
    for where, module in INSIDE_ALLOWED:  # an allowance no longer used goes
        assert module in _imports(ROOT / where), (where, module)


def test_the_room_check_tells_a_reach_from_a_room_s_own_import():
    reach = {"tuner.search._study", "tuner.release._export.export"}
    assert _reaches("tuner/cli.py", reach) == [("tuner/cli.py", "tuner.release._export.export"),
                                               ("tuner/cli.py", "tuner.search._study")]
    assert _reaches("tuner/search/_objective.py", {"tuner.search._study"}) == []  # its own
    assert _reaches("tuner/search/__init__.py", {"tuner.search._study"}) == []  # its __init__
    assert _reaches("tuner/release/_export.py", reach) == [
        ("tuner/release/_export.py", "tuner.search._study")]
    assert _reaches("experiments/tuner_benchmark/methods.py", {"tuner.search._study"}) == []
    # the way a file names the module makes no difference
    source = "from tuner.search import _study as study\nfrom tuner.release._export import x\n"
    assert _reaches("tuner/cli.py", _imports_of(source, ROOT / "tuner" / "cli.py")) == [
        ("tuner/cli.py", "tuner.release._export"), ("tuner/cli.py", "tuner.release._export.x"),
        ("tuner/cli.py", "tuner.search._study")]


def test_importing_the_rooms_loads_none_of_their_heavy_modules():
    # the lazy rooms import their modules on first use: every room's __init__ loads no module of
    # scoring, search or release, of synthesis only what config reads (the registry and its
    # search spaces), and none of SDV (nor torch through it), MLflow or matplotlib
    script = ("import sys, importlib\n"
              f"for room in {ROOMS!r}: importlib.import_module('tuner.' + room)\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "{'sdv', 'torch', 'mlflow', 'sdmetrics', 'matplotlib'} or m.startswith(("
              "'tuner.scoring._', 'tuner.search._', 'tuner.release._', 'tuner.synthesis._'))))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "['tuner.synthesis._families', 'tuner.synthesis._spaces']"


@pytest.mark.parametrize("room", LAZY_ROOMS)
def test_a_lazy_rooms_exports_are_typed(room):
    # a lazy room imports its exports under TYPE_CHECKING, each from the module _EXPORTS names,
    # so that mypy and editors see their signatures rather than Any
    tree = ast.parse((ROOT / "tuner" / room / "__init__.py").read_text())
    exports = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", None) == "_EXPORTS")
    block = next(n for n in tree.body if isinstance(n, ast.If)
                 and getattr(n.test, "id", None) == "TYPE_CHECKING")
    typed = {(a.asname or a.name): f"{n.module.rpartition('.')[2]}"
             + ("" if a.asname in (None, a.name) else f":{a.name}")
             for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert typed == exports


@pytest.mark.parametrize("room", ROOMS)
def test_a_rooms_docstring_lists_its_modules(room):
    import importlib
    import re as regex

    doc = importlib.import_module(f"tuner.{room}").__doc__ or ""
    assert "Modules:" in doc, room
    paragraph = doc.split("Modules:", 1)[1].split("\n\n", 1)[0]
    listed = set(regex.findall(r"``(\w+)``", paragraph))
    files = {p.stem for p in (ROOT / "tuner" / room).glob("*.py") if p.stem != "__init__"}
    assert files <= listed, sorted(files - listed)
    elsewhere = {p.stem for p in (ROOT / "tuner").rglob("*.py")} - files
    assert not listed & elsewhere, sorted(listed & elsewhere)  # listed here, lives elsewhere


def test_the_tuners_tests_mirror_its_rooms():
    # a room's tests live in tests/tuner/ROOM/; the front door's and the helpers' at the top
    for room in ROOMS:
        assert list((ROOT / "tests" / "tuner" / room).glob("test_*.py")), room
    rooms = {p.name for p in (ROOT / "tests" / "tuner").iterdir() if (p / "__init__.py").exists()}
    assert rooms <= set(ROOMS), sorted(rooms - set(ROOMS))
