"""Direct identifiers found before any trial, by name, content and uniqueness, all in one
message; strong quasi-identifiers warned about; no false alarm on the project's tables (issue 33,
item 1; design §9.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments.patients.generate import patients
from tests.data import load_acs_sample, load_adult, load_ce, require
from tuner import config
from tuner.cli import main
from tuner.data import (
    content_reason,
    findings,
    name_reason,
    quasi_warnings,
    read_builtin,
    read_dates,
)

IDENTIFIERS = ["ADDRESS", "DRIVERS", "FIRST", "Id", "LAST", "MAIDEN", "PASSPORT", "SSN"]


def _patient_config(tmp_path, data_extra: str = "") -> config.Config:
    patients(543, seed=3).to_csv(tmp_path / "patients.csv", index=False)
    path = tmp_path / "study.toml"
    path.write_text(f'[data]\npath = "patients.csv"\npopulation_size = 100000\n{data_extra}\n'
                    '[study]\noutput = "out"\n')
    return config.load(path)


def test_every_identifier_of_a_patient_table_is_named_in_one_message_before_any_trial(
        tmp_path, capsys):
    _patient_config(tmp_path)
    assert main(["run", str(tmp_path / "study.toml"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{len(IDENTIFIERS)} column(s) look like direct identifiers" in err
    for column in IDENTIFIERS:
        assert f"  - {column!r}: " in err
    for kept in ("CITY", "COUNTY", "ZIP", "PREFIX", "BIRTHDATE", "LAT", "HEALTHCARE"):
        assert f"'{kept}" not in err  # data, not identifiers
    assert f"[data] identifiers = {IDENTIFIERS!r}" in err  # the fix, to copy
    assert "[data] keep_as_data" in err
    assert not (tmp_path / "out").exists()  # no trial, no study, not even an empty folder


def test_following_the_message_leaves_warnings_on_coordinates_and_birth_dates(tmp_path, capsys):
    from tuner.search._context import prepare

    ctx = prepare(_patient_config(tmp_path, f"identifiers = {IDENTIFIERS!r}"))
    assert not set(IDENTIFIERS) & set(ctx.frame.columns)
    out = capsys.readouterr().out
    assert "['LAT', 'LON'] hold precise geographic coordinates" in out
    assert "['BIRTHDATE'] hold full dates of birth" in out
    assert "DEATHDATE" not in out
    # declared among the intruder's keys: said no more
    prepare(_patient_config(tmp_path, f"identifiers = {IDENTIFIERS!r}\n"
                                      'keys = ["LAT", "LON", "BIRTHDATE", "CITY"]'))
    assert "strong quasi-identifiers" not in capsys.readouterr().out


def test_keep_as_data_lets_a_column_found_by_name_through(tmp_path):
    from tuner.search._context import prepare

    rest = [c for c in IDENTIFIERS if c != "FIRST"]
    ctx = prepare(_patient_config(tmp_path, f"identifiers = {rest!r}\nkeep_as_data = "
                                            '["FIRST"]'))
    assert "FIRST" in ctx.frame.columns
    with pytest.raises(config.ConfigError, match=r"1 column\(s\)(.|\n)*'FIRST': named like a "
                                                 r"person's name"):
        prepare(_patient_config(tmp_path, f"identifiers = {rest!r}"))


@pytest.mark.parametrize(("name", "said"), [
    ("first_name", "a person's name"), ("LastName", "a person's name"),
    ("Maiden", "a person's name"), ("NI_number", "a social security"),
    ("social security", "a social security"), ("passport_no", "a passport number"),
    ("driver_licence", "a driving licence number"), ("e-mail", "an email address"),
    ("mobile_phone", "a phone number"), ("street", "an address"),
    ("patient_id", "a record identifier"), ("customerNumber", "a record identifier"),
])
def test_names_of_direct_identifiers(name, said):
    assert (name_reason(name) or "").startswith(said)


@pytest.mark.parametrize("name", ["automobile", "last_visit", "country_name", "fnlwgt",
                                  "native-country", "username_length", "region_id", "income"])
def test_names_that_are_not_direct_identifiers(name):
    assert name_reason(name) is None


def test_a_yes_no_column_named_like_an_identifier_is_not_one():
    frame = pd.DataFrame({"email_opt_in": ["yes", "no"] * 100, "x": np.arange(200) % 7})
    assert findings(frame) == {}


def _luhn_completed(digits: str) -> str:
    from tuner.data._content import _luhn
    return next(digits + d for d in "0123456789" if _luhn(digits + d))


def _iban_of(account: str) -> str:
    from tuner.data._content import _iban
    return next(f"DE{c:02d}{account}" for c in range(100) if _iban(f"DE{c:02d}{account}"))


@pytest.mark.parametrize(("values", "said"), [
    ([f"{i:03d}-{i % 97:02d}-{i * 7 % 9999:04d}" for i in range(200)], "social security"),
    ([f"AB{i:06d}C" for i in range(200)], "national insurance"),
    ([f"user{i}@example.org" for i in range(200)], "email addresses"),
    ([f"+44 20 7946 {i:04d}" for i in range(200)], "phone numbers"),
    ([f"K{i * 7919:07d}Z" for i in range(200)], "letter-digit codes"),
    ([f"patient said the pain began {i} days ago" for i in range(200)], "free text"),
    # checksums: Luhn-valid card numbers (4 and 15 digits, then a check digit) and IBANs
    ([_luhn_completed(f"4{i:014d}") for i in range(200)], "payment card numbers"),
    ([_iban_of(f"{i:018d}") for i in range(200)], "IBANs"),
    ([f"{i + 1} {('Oak', 'Elm', 'Main')[i % 3]} Street" for i in range(200)], "street addresses"),
])
def test_content_shaped_like_identifiers_is_found_whatever_the_name(values, said):
    frame = pd.DataFrame({"col7": values, "x": np.arange(200) % 5})
    assert said in content_reason(frame["col7"])
    assert "col7" in findings(frame) and "x" not in findings(frame)


def test_long_integer_codes_are_found_and_six_digit_weights_are_not():
    rng = np.random.default_rng(0)
    codes = pd.Series(rng.choice(10 ** 10, 500, replace=False) + 10 ** 10)
    assert content_reason(codes) == "long numeric codes, unique or nearly so"
    weights = pd.Series(rng.integers(10_000, 999_999, 500))  # as Adult's fnlwgt
    assert content_reason(weights) is None


def _names(n: int, seed: int) -> pd.Series:
    """Full names from 30 common given and 30 common family names (the sweep's 81 % unique)."""
    from faker import Faker
    fake = Faker("en_US")
    fake.seed_instance(seed)
    given = [fake.first_name() for _ in range(30)]
    family = [fake.last_name() for _ in range(30)]
    rng = np.random.default_rng(seed)
    return pd.Series([f"{rng.choice(given)} {rng.choice(family)}" for _ in range(n)])


def test_personal_names_and_emails_are_refused_whatever_the_header(tmp_path, capsys):
    frame = patients(400, seed=4)[["BIRTHDATE", "ZIP", "HEALTHCARE_EXPENSES"]]
    frame["col_a"] = _names(400, seed=1)
    assert 0.6 < frame["col_a"].nunique() / 400 < 0.9  # not unique enough to be caught so
    frame["contact"] = [f"p{i}@clinic.example" for i in range(400)]
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "study.toml").write_text('[data]\npath = "t.csv"\npopulation_size = 100000\n'
                                         '[study]\noutput = "out"\n')
    assert main(["run", str(tmp_path / "study.toml"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "'col_a': holds personal names" in err and "'contact': holds email addresses" in err
    assert not (tmp_path / "out" / "study.db").exists()


def test_places_and_nearly_unique_text():
    # a birthplace written "City State Country" is a quasi-identifier, not free text
    from faker import Faker
    fake = Faker("en_US")
    fake.seed_instance(2)
    places = pd.DataFrame({"birthplace": [f"{fake.city()} {fake.state()} US" for _ in range(300)]})
    assert content_reason(places["birthplace"]) is None
    # a text column unique for 97 % of the records is refused; kept as data it goes through
    codes = pd.DataFrame({"note": [f"k{i % 291}" for i in range(300)], "x": np.arange(300) % 4})
    assert findings(codes) == {"note": ["text unique for 97.0% of the records"]}


def _sd2011() -> pd.DataFrame:
    return pd.read_csv(require("sd2011/sd2011_orig.csv"))


@pytest.mark.parametrize("table", ["adult", "acs", "ce", "sd2011", "builtin:adult",
                                   "builtin:fair", "anonymeter"])
def test_no_false_alarm_on_the_tables_the_project_uses(table, tmp_path):
    """Adult (its near-unique fnlwgt), ACS, CE, SD2011 and the two built-in tables: nothing
    found, nothing that stops a run, and no quasi-identifier warning."""
    from tuner.data import drop_identifiers

    frame = {"adult": load_adult, "acs": load_acs_sample, "ce": load_ce, "sd2011": _sd2011,
             "builtin:adult": lambda: read_builtin("builtin:adult"),
             "builtin:fair": lambda: read_builtin("builtin:fair"),
             "anonymeter": lambda: pd.read_csv(require("anonymeter_adult/adult_train.csv"))
             }[table]()
    frame, formats = read_dates(frame)
    assert formats == {}  # none of them holds a date
    assert findings(frame) == {}
    assert quasi_warnings(frame) == []
    cfg = config.parse({"data": {"path": "x.csv", "population_size": 10 ** 6}}, base=tmp_path)
    d = cfg.data
    rest, warnings = drop_identifiers(frame, identifiers=d.identifiers,
                                      keep_as_data=d.keep_as_data, keys=d.keys)
    assert rest.shape == frame.shape
    assert all("strong quasi-identifiers" not in w for w in warnings)


def test_the_committed_patient_example_runs_past_the_checks(tmp_path, capsys):
    """experiments/patients/patients.toml on a generated table: identifiers dropped, dates
    read as dates, no warning left (its quasi-identifiers are the intruder's keys)."""
    import shutil
    from pathlib import Path

    from tuner.search._context import prepare

    example = Path(__file__).parents[3] / "experiments" / "patients" / "patients.toml"
    shutil.copy(example, tmp_path / "patients.toml")
    patients(543, seed=0).to_csv(tmp_path / "patients.csv", index=False)
    ctx = prepare(config.load(tmp_path / "patients.toml"))
    assert not set(IDENTIFIERS) & set(ctx.frame.columns)
    assert ctx.date_formats == {"BIRTHDATE": "%Y-%m-%d", "DEATHDATE": "%Y-%m-%d"}
    assert "warning" not in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_declared_identifiers_are_never_read_from_the_file(tmp_path, suffix, monkeypatch):
    """``[data] identifiers`` leave the table as it is read (Parquet ``columns``, CSV
    ``usecols``): the rest is the same table as reading everything and dropping them."""
    from tuner.data import read_table

    table = patients(300, seed=1)
    path = tmp_path / f"patients{suffix}"
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path)
    whole = read_table(path)
    seen: list[object] = []
    reader = pd.read_csv if suffix == ".csv" else pd.read_parquet

    def spy(*args, **kwargs):
        frame = reader(*args, **kwargs)
        seen.extend(frame.columns)
        return frame

    monkeypatch.setattr(pd, "read_csv" if suffix == ".csv" else "read_parquet", spy)
    rest = read_table(path, skip=IDENTIFIERS)
    assert not set(IDENTIFIERS) & set(seen)  # never in memory
    pd.testing.assert_frame_equal(rest, whole.drop(columns=IDENTIFIERS))
    # with a declared subset of the columns, the identifiers among them
    subset = read_table(path, ["Id", "CITY", "SSN", "ZIP"], skip=["Id", "SSN"])
    assert list(subset.columns) == ["CITY", "ZIP"]


def test_an_identifier_the_file_lacks_or_every_column_declared_is_refused(tmp_path):
    from tuner.data import read_table

    frame = pd.DataFrame({"Id": ["a", "b"], "age": [30, 40]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.parquet"):
        with pytest.raises(config.ConfigError, match=r"data.identifiers names column\(s\) "
                                                      r"\['SSN'\] that the data do not have; "
                                                      r"the data's columns are \['Id', 'age'\]"):
            read_table(tmp_path / name, skip=["Id", "SSN"])
        with pytest.raises(config.ConfigError, match="names every column"):
            read_table(tmp_path / name, skip=["Id", "age"])
    # a CSV saved with a byte-order mark (as spreadsheet programs do): its first name matches
    (tmp_path / "bom.csv").write_bytes("\ufeffId,age\na,30\nb,40\n".encode())
    assert list(read_table(tmp_path / "bom.csv", skip=["Id"]).columns) == ["age"]


def test_an_option_naming_a_declared_identifier_is_refused_before_the_data_are_read(
        tmp_path, monkeypatch):
    from tuner.search import _context as context

    cfg = _patient_config(tmp_path, f"identifiers = {IDENTIFIERS!r}\nkeys = ['SSN', 'CITY']\n"
                                    "dates = {SSN = '%Y-%m-%d'}\nmissing_codes = {Id = ['x']}")

    def unread(*args, **kwargs):
        raise AssertionError("the data were read")

    monkeypatch.setattr(context, "read_table", unread)
    with pytest.raises(config.ConfigError) as caught:
        context.prepare(cfg)
    said = str(caught.value)
    for option, column in (("data.keys", "SSN"), ("data.dates", "SSN"),
                           ("data.missing_codes", "Id")):
        assert (f"{option} names column(s) ['{column}'] that data.identifiers declares direct "
                "identifiers, which are never read") in said


def test_the_checksums_agree_with_published_examples_and_faker():
    from faker import Faker

    from tuner.data._content import _iban, _luhn
    # the card networks' test numbers, and ISO 13616's example IBAN (GB82 WEST ...)
    for good in ("4111111111111111", "5500000000000004", "340000000000009", "6011000000000004"):
        assert _luhn(good) and not _luhn(good[:-1] + str((int(good[-1]) + 1) % 10))
    assert _iban("GB82WEST12345698765432") and not _iban("GB83WEST12345698765432")
    fake = Faker("en_GB")
    fake.seed_instance(3)
    assert all(_luhn(fake.credit_card_number()) for _ in range(200))
    assert all(_iban(fake.iban()) for _ in range(200))


def test_names_in_other_scripts_and_repeated_listings_that_are_no_addresses():
    from faker import Faker
    fake = Faker("es_ES")
    fake.seed_instance(5)
    names = pd.Series([f"{fake.first_name()} {fake.last_name()}" for _ in range(300)])
    assert any(not n.isascii() for n in names)  # José, Peña ...
    assert content_reason(names) == "personal names (a given and a family name of Faker's lists)"
    listings = pd.Series(["1 Bedroom Apartment", "3 Bedroom House"] * 150)
    assert content_reason(listings) is None
