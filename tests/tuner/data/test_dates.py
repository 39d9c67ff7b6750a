"""Dates are dates (issue 33, item 2): date columns of a CSV (detected or declared) and of a
Parquet file read as datetimes, synthesised as SDV datetimes, released in the input's format,
and measured by every risk measure as numbers of days."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import risk
from experiments.patients.generate import patients
from tests.tuner.conftest import TINY_AUDIT_KEYS
from tuner.data import ambiguous_dates, detect_format, formatted, metadata_for, read_dates
from tuner.errors import InputError


@pytest.mark.parametrize(("values", "fmt"), [
    (["2001-02-03", "1999-12-31", None], "%Y-%m-%d"),
    (["2001-02-03 04:05:06", "1999-12-31 23:59:00"], "%Y-%m-%d %H:%M:%S"),
    (["2001-02-03T04:05:06", "1999-12-31T23:59:00"], "%Y-%m-%dT%H:%M:%S"),
    (["03/02/2001", "31/12/1999"], "%d/%m/%Y"),
    (["02/03/2001", "12/31/1999"], "%m/%d/%Y"),  # a day above 12 in the second place
    (["03.02.2001", "31.12.1999"], "%d.%m.%Y"),
])
def test_date_formats_are_detected(values, fmt):
    assert detect_format(pd.Series(values, dtype=object)) == fmt


@pytest.mark.parametrize("values", [["a", "b"], ["1-2", "3-4"], ["2001-02-30x", "2001-01-01"],
                                    ["12.5", "13.25"], [None, None], ["1.2.3", "4.5.6"],
                                    ["2001-02-03", "unknown"]])
def test_text_that_is_not_dates_stays_text(values):
    frame = pd.DataFrame({"c": pd.Series(values, dtype=object)})
    out, formats = read_dates(frame)
    assert formats == {} and out["c"].dtype == object


def test_dates_read_and_written_back_in_their_own_format_with_missing_kept():
    frame = pd.DataFrame({"born": ["31/01/1960", None, "02/11/1975"],
                          "seen": ["2020-01-05", "2021-03-04", None], "x": [1, 2, 3]})
    out, formats = read_dates(frame, {"born": "%d/%m/%Y"})
    assert formats == {"born": "%d/%m/%Y", "seen": "%Y-%m-%d"}
    assert out["born"].dtype.kind == "M" and out["seen"].dtype.kind == "M"
    assert out["born"].iloc[0] == pd.Timestamp("1960-01-31")
    back = formatted(out, formats)
    pd.testing.assert_frame_equal(back.astype(object).where(back.notna(), None),
                                  frame.astype(object).where(frame.notna(), None))
    assert metadata_for(out).to_dict()["tables"]["table"]["columns"]["born"]["sdtype"] == \
        "datetime"


def test_an_unparseable_date_is_named_with_its_value_and_line():
    born = [f"{1950 + i % 50}-0{1 + i % 9}-1{i % 10}" for i in range(30)]
    born[3] = "2003-02-31"
    frame = pd.DataFrame({"x": range(30), "born": born})
    with pytest.raises(InputError, match=r"date column 'born' holds '2003-02-31' on line 5, "
                                         r"which does not parse as '%Y-%m-%d'"):
        read_dates(frame)
    with pytest.raises(InputError, match=r"'x' holds '0' on line 2"):
        read_dates(frame, {"x": "%Y"})  # declared: every value must parse
    with pytest.raises(InputError, match=r"data.dates names column\(s\) \['died'\]"):
        read_dates(frame, {"died": "%Y-%m-%d"})


@pytest.mark.parametrize("offsets", [["+02:00"], ["+02:00", "-05:00"]], ids=["one", "mixed"])
def test_times_with_a_zone_offset_are_refused_naming_the_column(offsets):
    # a declared %z format parses to time-zone-aware times (one offset) or to Python objects
    # (several): the first stopped a trial with a TypeError, the second released the column as
    # categories of real times in another form; both are now the user's to convert
    stamps = [f"2006-07-{1 + i:02d}T10:30:00{offsets[i % len(offsets)]}" for i in range(20)]
    frame = pd.DataFrame({"x": range(20), "seen": stamps})
    with pytest.raises(InputError, match=r"date column 'seen' is declared with a time zone "
                                         r"\('%Y-%m-%dT%H:%M:%S%z'; first value "
                                         r"'2006-07-01T10:30:00\+02:00'\)"):
        read_dates(frame, {"seen": "%Y-%m-%dT%H:%M:%S%z"})


def test_a_column_with_one_date_among_many_missing_is_a_date_column():
    # the strided sample (every 2nd of 400 records) held no value of it: it was then judged by
    # the identifier checks, and refused as "letter-digit codes, unique or nearly so"
    died = pd.Series([None] * 400, dtype=object)
    died[133] = "1980-06-28"
    out, formats = read_dates(pd.DataFrame({"x": range(400), "died": died}))
    assert formats == {"died": "%Y-%m-%d"} and out["died"].dtype.kind == "M"
    assert out["died"].notna().sum() == 1 and out["died"][133] == pd.Timestamp("1980-06-28")


def test_dates_read_day_first_that_month_first_reads_too_are_named():
    # every day 12 or less: 03/02/2001 is read 3 February, and could be 2 March
    n = range(40)
    frame = pd.DataFrame({"amb": [f"{1 + i % 12:02d}/{1 + i % 9:02d}/19{50 + i}" for i in n],
                          "clear": [f"{1 + i % 28:02d}/{1 + i % 12:02d}/2001" for i in n],
                          "iso": ["2001-02-03"] * 40})
    out, formats = read_dates(frame)
    assert formats["amb"] == formats["clear"] == "%d/%m/%Y"
    assert ambiguous_dates(out, formats) == [("amb", "%m/%d/%Y")]
    assert ambiguous_dates(out, formats, declared={"amb": "%d/%m/%Y"}) == []  # said by the user


def test_the_run_names_an_ambiguous_date_column_and_what_to_declare(tmp_path, capsys):
    from tests.tuner.conftest import write_config
    from tuner import config
    from tuner.data import read_builtin
    from tuner.search import prepare

    frame = read_builtin("builtin:fair").head(300)
    frame.insert(0, "seen", [f"{1 + i % 12:02d}/{1 + i % 9:02d}/20{10 + i % 9}"
                             for i in range(len(frame))])
    frame.to_csv(tmp_path / "fair.csv", index=False)
    path = write_config(tmp_path, synthesizers=("cart",), n_trials=1)
    path.write_text(path.read_text().replace('"builtin:fair"', '"fair.csv"'))
    prepare(config.load(path))
    assert ("note: column 'seen' is read day first ('%d/%m/%Y'), but every day in it is 12 or "
            "less, so month first ('%m/%d/%Y') reads it too: if its dates are month first, "
            'declare [data] dates = {seen = "%m/%d/%Y"}') in capsys.readouterr().out


def test_whole_numbers_read_as_floats_are_released_as_whole_numbers():
    # a column of whole numbers with a missing value is read as floats; the release writes
    # them as the file did (60614, not 60614.0), and leaves real fractions and NaN-only columns
    frame = pd.DataFrame({"zip": [60614.0, np.nan, 10001.0], "age": [63.0, 40.0, np.nan],
                          "income": [0.5, np.nan, 2.0], "empty": [np.nan] * 3,
                          "huge": [1e20, 2e20, np.nan], "n": [1, 2, 3],
                          "inf": [1.0, np.inf, np.nan]})
    back = formatted(frame, {})
    assert back.to_csv(index=False).splitlines() == [
        "zip,age,income,empty,huge,n,inf", "60614,63,0.5,,1e+20,1,1.0", ",40,,,2e+20,2,inf",
        "10001,,2.0,,,3,"]
    assert frame["zip"].dtype == float  # the frame the measures read is untouched


def test_parquet_datetimes_dates_and_time_zones_are_plain_datetimes(tmp_path):
    from tuner.data import read_table

    frame = pd.DataFrame({
        "stamp": pd.to_datetime(["2001-02-03 04:05:06", None]),
        "day": [dt.date(2001, 2, 3), None],
        "zoned": pd.to_datetime(["2001-02-03 04:05:06+02:00", "2001-02-04 00:00:00+02:00"]),
        "x": [1.0, 2.0]})
    frame.to_parquet(tmp_path / "t.parquet")
    out, formats = read_dates(read_table(tmp_path / "t.parquet"))
    assert formats == {"stamp": "%Y-%m-%d %H:%M:%S", "day": "%Y-%m-%d",
                       "zoned": "%Y-%m-%d %H:%M:%S"}
    assert all(out[c].dtype == "datetime64[ns]" for c in formats)
    assert out["zoned"].iloc[0] == pd.Timestamp("2001-02-03 02:05:06")  # as UTC
    assert formatted(out, formats)["day"].tolist()[0] == "2001-02-03"


def _as_days(frame: pd.DataFrame) -> pd.DataFrame:
    """Every datetime column as a float number of days since 1970."""
    return frame.assign(**{c: (frame[c] - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
                           for c in frame.columns if frame[c].dtype.kind == "M"})


def test_every_risk_measure_reads_dates_as_days():
    """Exact copies, DCR, CAP with a date key and M give the same numbers on dates as on the
    same dates written as numbers of days (design §3 step 3; the audit: test below)."""
    rng = np.random.default_rng(5)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({
            "born": pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 40, n) * 365,
                                                                 unit="D"),
            "sex": rng.choice(["f", "m"], n), "ill": rng.choice(["y", "n"], n)})

    train, holdout, synthetic = table(400), table(400), table(400)
    synthetic.iloc[:40] = train.iloc[:40].to_numpy()  # some copies to count
    days = [_as_days(f) for f in (train, holdout, synthetic)]
    copies = (risk.exact_copies(train, synthetic, holdout=holdout, numeric_bins=20),
              risk.exact_copies(*days[::2], holdout=days[1], numeric_bins=20))
    assert copies[0].to_dict() == pytest.approx(copies[1].to_dict())
    assert copies[0].to_dict()["train_share"] >= 0.1
    dcr = [risk.distance_to_closest_record(a, c, holdout=b, random_state=0)
           for a, b, c in ((train, holdout, synthetic), days)]
    assert dcr[0].to_dict() == pytest.approx(dcr[1].to_dict())
    caps = [risk.cap(a, c, keys=["born", "sex"], target="ill", holdout=b)
            for a, b, c in ((train, holdout, synthetic), days)]
    assert caps[0].to_dict() == pytest.approx(caps[1].to_dict())
    ms = [risk.membership_disclosure(a, b, c, population_size=10_000, repeats=10,
                                     random_state=0, curve=False)
          for a, b, c in ((train, holdout, synthetic), days)]
    assert ms[0].to_dict() == pytest.approx(ms[1].to_dict())


IDENTIFIERS = ["ADDRESS", "DRIVERS", "FIRST", "Id", "LAST", "MAIDEN", "PASSPORT", "SSN"]


def _patient_study(tmp_path, data_file: str, *, audit: bool = True) -> dict:
    return {"data": {"path": str(tmp_path / data_file), "population_size": 100_000,
                     "identifiers": IDENTIFIERS, "keys": ["BIRTHDATE", "PREFIX", "CITY"]},
            "study": {"name": "patients", "synthesizers": ["gaussian_copula"], "n_trials": 2,
                      "output": str(tmp_path / "out"), "public_seed": True},
            "risk": {"repeats": 10, "attribute_keys": ["BIRTHDATE", "PREFIX"],
                     "cap_targets": ["COUNTY"]},
            "utility": {"metric": "quality_report"},
            "audit": dict(TINY_AUDIT_KEYS) if audit else {"enabled": False, "required": False}}


@pytest.mark.slow
@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_a_patient_release_holds_new_dates_in_the_input_form(tmp_path, form):
    """The issue's example end to end: identifiers dropped, birth dates new dates in the input's
    form inside the real range, death dates' missing share kept; the gate (copies, DCR, CAP
    with a date key, M) and the release audit ran on the dates (read from the CSV; from
    Parquet they are the same dates once read, and the audit's fits took 18 s)."""
    import tuner

    real = patients(543, seed=3)
    if form == "csv":
        real.to_csv(tmp_path / "patients.csv", index=False)
    else:  # a datetime column and a date column
        real.assign(BIRTHDATE=pd.to_datetime(real["BIRTHDATE"]),
                    DEATHDATE=pd.to_datetime(real["DEATHDATE"]).dt.date
                    .where(real["DEATHDATE"].notna(), None)).to_parquet(tmp_path / "p.parquet")
    study = tuner.tune(_patient_study(tmp_path, "patients.csv" if form == "csv" else
                                      "p.parquet", audit=form == "csv"))
    assert study.release_folder is not None
    released = pd.read_csv(study.release_folder / "synthetic.csv", dtype=str)
    assert not set(IDENTIFIERS) & set(released.columns)
    born = released["BIRTHDATE"].dropna()
    assert born.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    real_born = pd.to_datetime(real["BIRTHDATE"])
    assert pd.to_datetime(born).between(real_born.min(), real_born.max()).all()
    assert (~born.isin(real["BIRTHDATE"])).mean() > 0.5  # new dates, not re-emitted ones
    died = released["DEATHDATE"]
    assert died.dropna().str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    assert abs(died.isna().mean() - real["DEATHDATE"].isna().mean()) < 0.08
    manifest = (study.release_folder / "manifest.json").read_text()
    for measured in ("cap_difference.COUNTY", "dcr_excess", "copies_difference"):
        assert measured in manifest
    if form == "csv":
        assert '"ran": true' in manifest  # the release audit refitted on the dates


def test_the_report_draws_a_date_column_on_a_calendar_axis():
    from tuner.release._plots import marginal_tables, marginals

    born = pd.Series(pd.to_datetime(["1950-06-01", "1960-01-01", "1970-01-01", "1980-07-01"] * 50))
    real = pd.DataFrame({"born": born, "x": ["a", "b"] * 100})
    (table,) = [t for t in marginal_tables(real, real, {}, min_count=1) if t.column == "born"]
    assert table.kind == "histogram" and table.axis == "year"
    assert 1950 <= table.edges[0] < table.edges[-1] <= 1981  # decimal years of the real range
    figure = marginals([table])
    ax = figure.axes[0]
    assert ax.get_xlabel() == "date"
    figure.canvas.draw()  # the ticks are dates of the real range, not decimal years
    low, high = ax.get_xlim()  # ticks drawn within the view, in matplotlib's day numbers
    labels = [t.get_text() for t in ax.get_xticklabels()
              if t.get_text() and low <= t.get_position()[0] <= high]
    assert [int(t) for t in labels] == [1950, 1960, 1970, 1980], labels
    edges = ax.patches[0].get_data().edges  # the training histogram, matplotlib's day numbers
    first, last = (pd.Timestamp("1970-01-01") + pd.Timedelta(days=d) for d in edges[[0, -1]])
    assert pd.Timestamp("1950-06-01") <= first < last <= pd.Timestamp("1980-07-02")


def test_a_bad_date_stops_the_run_before_any_trial_naming_value_and_line(tmp_path, capsys):
    from tuner.cli import main

    table = patients(120, seed=1).drop(columns=IDENTIFIERS)
    table.loc[57, "BIRTHDATE"] = "1961-13-02"  # record 58: line 59 under the header
    table.to_csv(tmp_path / "p.csv", index=False)
    (tmp_path / "study.toml").write_text('[data]\npath = "p.csv"\npopulation_size = 100000\n'
                                         '[study]\noutput = "out"\n')
    assert main(["run", str(tmp_path / "study.toml"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "date column 'BIRTHDATE' holds '1961-13-02' on line 59" in err
    assert not (tmp_path / "out" / "study.db").exists()
    assert not (tmp_path / "out" / "release").exists()


# ------------------------------------------------------------------ dates no one form reads


@pytest.mark.parametrize(("values", "said"), [
    # one in seven day first, the rest ISO (the sweep's case): both forms named, a line to paste
    (["2001-02-03"] * 6 + ["03/02/2001"],
     r"column 'D' holds dates in several forms \('2001-02-03' reads as '%Y-%m-%d', "
     r"'03/02/2001' as '%d/%m/%Y'\).*\[data\] dates = \{D = \"%Y-%m-%d\"\}"),
    (["2001-02-03T10:00:00Z", "1999-12-31T23:59:00Z"],
     r"time zone \(e.g. '2001-02-03T10:00:00Z'\)"),
    (["2001-02-03 10:00+02:00", "1999-12-31 23:59-05:00"], "time zone"),
    (["03/02/91", "31/12/99"], r"two-digit years \(e.g. '03/02/91'\).*%d/%m/%y"),
])
def test_dates_no_one_form_reads_are_refused_at_read(values, said):
    with pytest.raises(InputError, match=said):
        read_dates(pd.DataFrame({"D": pd.Series(values, dtype=object), "x": range(len(values))}))


def test_a_declared_two_digit_year_reads_and_codes_are_not_dates():
    out, formats = read_dates(pd.DataFrame({"D": ["03/02/91", "31/12/99"]}),
                              {"D": "%d/%m/%y"})
    assert out["D"].tolist() == [pd.Timestamp("1991-02-03"), pd.Timestamp("1999-12-31")]
    codes = pd.DataFrame({"C": ["10-12-15", "11-02-16", "a-b"]})
    assert read_dates(codes)[0].equals(codes)  # dashes: as often a code as a date
    versions = pd.DataFrame({"V": ["1.2.10", "2.0.15", "3.1.4"]})
    assert read_dates(versions)[0].equals(versions)  # dots: versions (found in review)


@pytest.mark.parametrize("name", ["adult", "acs_sample", "ce", "sd2011/sd2011_orig.csv",
                                  "anonymeter_adult/adult_train.csv"])
def test_no_column_of_the_shared_datasets_is_refused_as_dates(name):
    from tests import data

    frame = (pd.read_csv(data.require(name)) if "/" in name
             else getattr(data, f"load_{name}")())
    for col in frame.columns:
        read_dates(frame[[col]])  # raises on a refusal
