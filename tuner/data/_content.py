"""Direct identifiers by content (:mod:`tuner.data._identifiers`): what a column's sampled
values look like, when that is a direct identifier: SSN- or NI-shaped values, emails, payment
card numbers and IBANs (their checksums), phone numbers, long letter-digit codes unique or
nearly so, street addresses, personal names (a given and a family name of Faker's lists, of
:data:`NAME_LOCALES`), free text."""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable

import numpy as np
import pandas as pd

FIRST_LOOK = 100  # values judged first; all SAMPLE only where these look like identifiers
SHAPED = 0.9  # share of the sampled values that must have an identifier's shape

# (what the values look like, pattern every value must match), on text values
SHAPES: tuple[tuple[str, str], ...] = (
    ("social security numbers (999-99-9999)", r"\d{3}-\d{2}-\d{4}"),
    ("national insurance numbers (AB123456C)", r"[A-Za-z]{2}\d{6}[A-Da-d]"),
    ("email addresses", r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}"),
)
_PHONE_CHARS = r"\+?[\d\s().\-x]+"
_CODE = r"[A-Za-z0-9][A-Za-z0-9\-]{5,}"  # six or more letters and digits, with dashes


def judged(series: pd.Series) -> bool:
    """Judged by content and uniqueness: not a float measurement, a date or a yes/no."""
    return not (pd.api.types.is_float_dtype(series) or pd.api.types.is_bool_dtype(series)
                or pd.api.types.is_datetime64_any_dtype(series))


def content_reason(values: pd.Series) -> str | None:
    """What a column's sampled values look like, when that is a direct identifier: judged on
    :data:`FIRST_LOOK` of them spread over the sample, and only where they look like one, on
    all of them (most columns are categories or numbers, told apart at a glance). On all of
    them the glance's shape is tried first; the others only where it does not hold."""
    if not judged(values):
        return None
    present = values.dropna()
    if present.empty:
        return None
    glance = present.iloc[::max(1, len(present) // FIRST_LOOK)]
    if pd.api.types.is_integer_dtype(present):
        return _long_codes(present) if _long_codes(glance) is not None else None
    seen = _Text(glance)
    first = next((check for check in _CHECKS if check(seen) is not None), None)
    if first is None:
        return None
    text = _Text(present)
    return first(text) or next((said for check in _CHECKS if check is not first
                                and (said := check(text)) is not None), None)


def _long_codes(present: pd.Series) -> str | None:
    """Integers of nine digits or more, unique or nearly so (record numbers, not weights)."""
    digits = present.abs().astype("string").str.len()
    if (digits >= 9).mean() >= SHAPED and present.nunique() / len(present) >= SHAPED:
        return "long numeric codes, unique or nearly so"
    return None


class _Text:
    """A sample's values as stripped strings, with what the checks share (their share of
    distinct values, digits per value), each computed once. The sample is at most
    :data:`SAMPLE` values: plain strings and compiled patterns judge it faster than pandas'
    string methods, whose fixed cost per call dominates at this size."""

    def __init__(self, present: pd.Series) -> None:
        values = present.tolist()
        self.values = [str(v).strip() for v in values]
        self.distinct = len(set(values)) / len(values)
        self._digits: np.ndarray | None = None

    @property
    def digits(self) -> np.ndarray:
        if self._digits is None:
            self._digits = np.array([len(v) - len(v.translate(_NO_DIGITS))
                                     for v in self.values])
        return self._digits

    def share(self, pattern: re.Pattern[str], where: np.ndarray | None = None) -> float:
        """Share of values matching ``pattern`` in full (and ``where``, if given)."""
        hits = np.array([pattern.fullmatch(v) is not None for v in self.values])
        return float((hits & where).mean() if where is not None else hits.mean())


def _shaped(said: str, pattern: str) -> Callable[[_Text], str | None]:
    """The check that values have one of :data:`SHAPES`."""
    compiled = re.compile(pattern)

    def check(text: _Text) -> str | None:
        return said if text.share(compiled) >= SHAPED else None
    return check


def _phone(text: _Text) -> str | None:
    lengths = np.array([len(v) for v in text.values])
    where = (text.digits >= 9) & (text.digits <= 15) & (text.digits < lengths)
    return "phone numbers" if text.share(_PHONE, where) >= SHAPED else None


def _code(text: _Text) -> str | None:
    if text.distinct >= SHAPED and text.share(_CODE_RE) >= SHAPED:
        return "letter-digit codes, unique or nearly so"
    return None


# Latin-script locales whose given and family names Faker ships (SDV installs it): the lists a
# column of personal names is recognised by, whatever its header
NAME_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR",
                "pl_PL", "sv_SE")
NAMES_FOUND = 0.8  # share of values whose first word is a given name and last a family name


@functools.lru_cache(maxsize=1)
def _name_lists() -> tuple[frozenset[str], frozenset[str]]:
    """Lower-cased given names and family names of :data:`NAME_LOCALES` (Faker's lists)."""
    given: set[str] = set()
    family: set[str] = set()
    for locale in NAME_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for attr in ("first_names", "first_names_male", "first_names_female"):
            given |= {str(n).lower() for n in getattr(provider, attr, ())}
        family |= {str(n).lower() for n in getattr(provider, "last_names", ())}
    return frozenset(given), frozenset(family)


def _person_names(text: _Text) -> str | None:
    """Values of two to four words, the first a given name and the last a family name of the
    name lists (:data:`NAME_LOCALES`), for :data:`NAMES_FOUND` of them: "Mary Smith", "Jean-Luc
    Martin". A place ("Boston Massachusetts US") is not: its words are not both in the lists."""
    shaped = [v.split() for v in text.values]
    if np.mean([2 <= len(w) <= 4 and all(map(_name_word, w)) for w in shaped]) < NAMES_FOUND:
        return None
    given, family = _name_lists()
    found = np.mean([2 <= len(w) <= 4 and w[0].lower().rstrip(".") in given
                     and w[-1].lower() in family for w in shaped])
    return "personal names (a given and a family name of Faker's lists)" \
        if found >= NAMES_FOUND else None


def _name_word(word: str) -> bool:
    """A capitalised word of letters in any script, with ' - . inside ("José", "O'Neil")."""
    return word[:1].isupper() and all(c.isalpha() or c in "'-." for c in word)


def _luhn(number: str) -> bool:
    """The Luhn checksum of a payment card number (ISO/IEC 7812-1)."""
    digits = [int(c) for c in reversed(number)]
    total = sum(d if i % 2 == 0 else (2 * d - 9 if d > 4 else 2 * d)
                for i, d in enumerate(digits))
    return total % 10 == 0


def _iban(code: str) -> bool:
    """The ISO 13616 check of an IBAN: moved and read as a number, it is 1 modulo 97."""
    moved = code[4:] + code[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _checksummed(text: _Text) -> str | None:
    """Payment card numbers (13-19 digits, spaces or dashes between, Luhn) or IBANs (two
    letters, two check digits, up to 30 letters and digits, ISO 13616), checksums valid for
    :data:`SHAPED` of the values: one in ten random numbers passes Luhn, one in 97 an IBAN's."""
    plain = [re.sub(r"[\s-]", "", v) for v in text.values]
    if np.mean([bool(_CARD.fullmatch(v)) and _luhn(v) for v in plain]) >= SHAPED:
        return "payment card numbers (Luhn checksum)"
    if np.mean([bool(_IBAN.fullmatch(v.upper())) and _iban(v.upper()) for v in plain]) >= SHAPED:
        return "IBANs (ISO 13616 checksum)"
    return None


def _street_address(text: _Text) -> str | None:
    if text.distinct >= 0.5 and text.share(_STREET) >= SHAPED:  # "3 Bedroom House" repeats
        return "street addresses (a house number and a street)"
    return None


def _free_text(text: _Text) -> str | None:
    """Three or more words a value on average, mostly different, and written as prose: a third
    of the words after the first in lower case (a place, "Springfield Massachusetts US", is
    a quasi-identifier, not free text)."""
    words = [v.split() for v in text.values]
    if text.distinct < 0.5 or np.mean([len(w) for w in words]) < 3:
        return None
    later = [x for w in words for x in w[1:]]
    if not later or np.mean([x[:1].islower() for x in later]) < 1 / 3:
        return None
    return "free text (three or more words, mostly different)"


_NO_DIGITS = str.maketrans("", "", "0123456789")
_PHONE, _CODE_RE = re.compile(_PHONE_CHARS), re.compile(r"(?=\D*\d)" + _CODE)  # a digit in it
# in the order a column's values are judged: the first that holds says what they are
_CARD, _IBAN = re.compile(r"\d{13,19}"), re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}")
# a house number, then two or more capitalised words (a street and its type, "Suite 4" after)
_STREET = re.compile(r"\d{1,6}[A-Za-z]?,? [A-Z][A-Za-z.'\-]*(?: [A-Z][A-Za-z.'\-]*)+"
                     r"(?:,? (?:Apt|Suite|Unit|Flat)\.? ?\w+)?")
_CHECKS = (*(_shaped(said, shape) for said, shape in SHAPES), _checksummed, _phone, _code,
           _street_address, _person_names, _free_text)
