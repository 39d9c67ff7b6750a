"""Fake values for the columns SDV metadata declares PII or keys (issue 33, item 3;
:mod:`tuner.data._metadata` says which and how).

A fake column never holds a real value by construction: its values are drawn from Faker or
from the metadata's ``regex_format``, with no look at the real column but its missing share
(SDV's ``AnonymizedFaker`` keeps that too: ``missing_value_generation = "random"``). Each is
seeded from the study's one seed and secret (:func:`tuner._common.seeding.derive`), so that a
release made again is the same file.

Values with many possible forms (an SSN, an id, an email, a phone number, an address, a
passport number) can still equal a real one by chance; :func:`fill` then draws those records
again, with the next seed, up to :data:`REDRAWS` times, and fails the release naming the column
if some still do (a ``regex_format`` with too few strings). Names and places are drawn from
Faker's lists: one may equal a real person's name by chance, unlinked to that person, and is
not checked (:data:`tuner.data._metadata.FROM_A_LIST`); on a large release they are :data:`POOL`
Faker draws resampled (the same weighted list, at a 20th of the time on 400,000 records).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import numpy as np
import pandas as pd

from tuner.data._metadata import ID_MAX, ID_TEXT, Declared, Fake
from tuner.errors import InputError

REDRAWS = 5  # further draws of the records whose fake equals a real value, before failing
# names and places (not checked, not a key) on more records than this: this many Faker draws,
# resampled at random; Faker's weighted draw of a name costs about 0.1 ms, 40 s on 400,000
# records, and the values follow the same weighted list
POOL = 20_000
UNBOUNDED_EXTRA = 9  # a regex's * or +: at most this many repeats beyond its minimum
_CATEGORIES = {sre.CATEGORY_DIGIT: string.digits,
               sre.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
               sre.CATEGORY_SPACE: " "}
_ANY = string.ascii_letters + string.digits


class FakesFailed(InputError):
    """Fake values that cannot be made different from every real value, or not from this
    column's metadata (a regex the generator does not read)."""


def _alphabet(items: list[tuple[Any, Any]], where: str) -> str:
    """The characters of a regex class ``[...]``."""
    chars = []
    for op, arg in items:
        if op is sre.LITERAL:
            chars.append(chr(arg))
        elif op is sre.RANGE:
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        elif op is sre.CATEGORY and arg in _CATEGORIES:
            chars.extend(_CATEGORIES[arg])
        else:
            raise FakesFailed(f"{where}: the class element {op} {arg} is not drawn by the "
                              "tuner (use literal characters, ranges, \\d, \\w)")
    return "".join(dict.fromkeys(chars))


def _draw(parsed: Any, n: int, rng: np.random.Generator, where: str) -> np.ndarray:
    """``n`` random strings matching the parsed regex ``parsed`` (an object array)."""
    out = np.full(n, "", dtype=object)
    for op, arg in parsed:
        if op is sre.LITERAL:
            piece = np.full(n, chr(arg), dtype=object)
        elif op in (sre.IN, sre.ANY):
            alphabet = _ANY if op is sre.ANY else _alphabet(arg, where)
            piece = np.asarray(list(alphabet), dtype=object)[rng.integers(len(alphabet), size=n)]
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, sub = arg
            high = low + UNBOUNDED_EXTRA if high is sre.MAXREPEAT else high
            times = rng.integers(low, high + 1, size=n)
            piece = np.full(n, "", dtype=object)
            for k in range(high):
                more = _draw(sub, n, rng, where)
                piece = np.where(times > k, piece + more, piece)
        elif op is sre.SUBPATTERN:
            piece = _draw(arg[-1], n, rng, where)
        elif op is sre.BRANCH:
            options = [_draw(b, n, rng, where) for b in arg[1]]
            pick = rng.integers(len(options), size=n)
            piece = np.choose(pick, options)
        elif op is sre.AT:
            continue  # ^ and $
        else:
            raise FakesFailed(f"{where}: the regex element {op} is not drawn by the tuner "
                              "(use characters, classes, groups, | and repeats)")
        out = out + piece
    return out


CAPACITY_CAP = 10**30  # "more than any table": counting stops here


def _capacity(parsed: Any) -> int:
    """How many distinct strings :func:`_draw` can make of ``parsed``, at most
    :data:`CAPACITY_CAP` (repeats, branches and classes as :func:`_draw` draws them; where
    branches or repeats can make the same string, an upper bound)."""
    total = 1
    for op, arg in parsed:
        if op is sre.LITERAL or op is sre.AT:
            count = 1
        elif op in (sre.IN, sre.ANY):
            count = len(_ANY) if op is sre.ANY else len(_alphabet(arg, "regex_format"))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, sub = arg
            high = low + UNBOUNDED_EXTRA if high is sre.MAXREPEAT else high
            one = _capacity(sub)
            count = sum(min(one**k, CAPACITY_CAP) for k in range(low, high + 1))
        elif op is sre.SUBPATTERN:
            count = _capacity(arg[-1])
        elif op is sre.BRANCH:
            count = sum(_capacity(b) for b in arg[1])
        else:
            return CAPACITY_CAP  # not drawn here: drawing it says so (regex_values)
        total = min(total * count, CAPACITY_CAP)
    return total


def distinct_strings(pattern: str) -> int:
    """The number of distinct strings the fakes of ``pattern`` can take (at most
    :data:`CAPACITY_CAP`); :data:`CAPACITY_CAP` for a pattern that does not parse (drawing it
    says why)."""
    try:
        return _capacity(sre_parse.parse(pattern))
    except (re.error, FakesFailed):
        return CAPACITY_CAP


def key_problems(declared: Declared, pii: pd.DataFrame, n_records: int) -> list[str]:
    """What the metadata's keys cannot do with these data, before any trial (exit 2): a
    ``primary_key`` whose real values repeat (it is not a key, and its fakes would be unique
    where the real column is not), an ``id`` or key column whose ``regex_format`` allows fewer
    distinct strings than the table has records (its fakes would repeat)."""
    out = []
    key = declared.primary_key
    if key is not None and key in pii.columns:
        repeated = int(pii[key].dropna().duplicated().sum())
        if repeated:
            out.append(f"data.metadata declares {key!r} the primary key, but {repeated} of its "
                       f"values repeat one before them: a key names each record once (declare "
                       "it as another sdtype, or remove primary_key)")
    for column, fake in declared.fakes.items():
        if fake.regex is None or not (fake.unique or fake.sdtype == "id"):
            continue
        # unique fakes, and (checked) none equal to a real value: room for both
        need = 2 * n_records if fake.checked else n_records
        if (room := distinct_strings(fake.regex)) < need:
            out.append(f"data.metadata: column {column!r} has a regex_format that allows "
                       f"{room:,} distinct strings, fewer than the {need:,} its fakes need for "
                       f"the table's {n_records:,} records (each fake unique"
                       + (" and unlike every real value" if fake.checked else "")
                       + "): give it a pattern with more possible strings")
    return out


def regex_values(pattern: str, n: int, *, seed: int, where: str = "regex_format") -> pd.Series:
    """``n`` strings matching ``pattern``, each character drawn at random (seeded)."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise FakesFailed(f"{where}: {pattern!r} is not a regular expression ({exc})") from None
    return pd.Series(_draw(parsed, n, np.random.default_rng(seed), where), dtype=object)


def faker_values(function: str, n: int, *, seed: int,
                 kwargs: dict[str, Any] | None = None) -> pd.Series:
    """``n`` values of Faker's ``function`` (en_US, SDV's default locale), seeded."""
    from faker import Faker

    faker = Faker("en_US")
    faker.seed_instance(seed)
    make: Callable[..., Any] = getattr(faker, function)
    return pd.Series([make(**(kwargs or {})) for _ in range(n)], dtype=object)


def draw(fake: Fake, n: int, *, seed: int, numeric: bool = False) -> pd.Series:
    """``n`` fake values of ``fake``; ``numeric``: the real column holds numbers (an id without
    a regex is then an integer below 2**24, as SDV makes it)."""
    where = f"column {fake.column!r}"
    if fake.regex is not None:
        return regex_values(fake.regex, n, seed=seed, where=f"{where}'s regex_format")
    if numeric and fake.function == "bothify" and fake.kwargs.get("text") == ID_TEXT:
        rng = np.random.default_rng(seed)
        return pd.Series(rng.integers(0, ID_MAX + 1, size=n), dtype=object)
    assert fake.function is not None  # a Fake is made with a regex or a function
    if fake.checked or fake.unique or n <= POOL:
        return faker_values(fake.function, n, seed=seed, kwargs=fake.kwargs)
    pool = faker_values(fake.function, POOL, seed=seed, kwargs=fake.kwargs).to_numpy()
    picks = np.random.default_rng(seed).integers(POOL, size=n)
    return pd.Series(pool[picks], dtype=object)


def _clashes(values: pd.Series, real: set[str], *, unique: bool) -> np.ndarray:
    """Which of ``values`` equal a real value (as text), or (``unique``) an earlier one."""
    text = values.astype("string")
    clash = text.isin(real).to_numpy(dtype=bool, na_value=False)
    if unique:
        clash |= text.duplicated().to_numpy(dtype=bool)
    return clash


def fill(fake: Fake, real: pd.Series, n: int, *,
         seed_of: Callable[[int], int], missing_share: float) -> tuple[pd.Series, int]:
    """``n`` fake values of ``fake`` for a release, and how many were drawn again.

    ``real``: the column's real values (every record), only compared with; ``seed_of(k)``: the
    seed of the k-th draw; ``missing_share``: the share left missing (drawn at random)."""
    numeric = pd.api.types.is_numeric_dtype(real)
    values = draw(fake, n, seed=seed_of(0), numeric=numeric)
    redrawn = 0
    if fake.checked or fake.unique:
        known = set(real.dropna().astype("string").str.strip()) if fake.checked else set()
        for attempt in range(1, REDRAWS + 1):
            clash = _clashes(values, known, unique=fake.unique)
            if not clash.any():
                break
            redrawn += int(clash.sum())
            again = draw(fake, int(clash.sum()), seed=seed_of(attempt), numeric=numeric)
            values = values.copy()
            values.iloc[np.flatnonzero(clash)] = again.to_numpy()
        clash = _clashes(values, known, unique=fake.unique)
        if clash.any():
            raise FakesFailed(
                f"column {fake.column!r} (sdtype {fake.sdtype!r}): {int(clash.sum())} fake "
                f"value(s) still equal a real value{' or each other' if fake.unique else ''} "
                f"after {REDRAWS} further draws; nothing released. Its metadata allows too few "
                "values: give it a regex_format with more possible strings, or another sdtype")
    if missing_share > 0:
        rng = np.random.default_rng(seed_of(REDRAWS + 1))
        values = values.mask(rng.random(n) < missing_share)
    return values, redrawn
