"""Secrets stay with the custodian (issue #32, design §9.2): from a release's public files
(manifest, reports) nobody rebuilds the training rows with the project's own split, whatever
integers they hold; the custodian's ``seeds.json`` holds the secret and the release is made
again from it byte for byte; a DP mechanism's noise is keyed with 128 secret bits."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat

import numpy as np
import pytest

import tuner
from tests.tuner.conftest import write_config
from tuner._common.seeding import derive, noise_key, split_seed
from tuner.cli import main
from tuner.data import read_builtin, split
from tuner.release._manifest import SPLIT_FILE
from tuner.search._secret import CUSTODIAN_FILE, decode, encode
from tuner.synthesis._families import SYNTHESIZERS
from tuner.synthesis._synthesizers import build


def test_keyed_seeds_differ_by_secret_and_path_and_are_stable():
    public = derive(7, 0)
    assert public == derive(7, 0, secret=None)  # public seeds: as the study always derived them
    a, b = derive(7, 0, secret=1), derive(7, 0, secret=2)
    assert len({public, a, b, derive(7, 1, secret=1), derive(8, 0, secret=1)}) == 5
    assert a == derive(7, 0, secret=1) and 0 <= a < 2**32
    assert noise_key(7, 2, 0) is None
    key = noise_key(7, 2, 0, secret=1)
    assert key is not None and key.bit_length() > 64 and key != noise_key(7, 2, 1, secret=1)


def test_the_secret_round_trips_and_a_malformed_one_is_refused():
    assert decode(encode(2**127 + 5), "x") == 2**127 + 5 and decode(encode(None), "x") is None
    with pytest.raises(tuner.config.ConfigError, match="malformed study secret"):
        decode("12ab", "the storage")


def test_a_private_family_draws_its_noise_from_the_noise_key():
    frame = read_builtin("builtin:fair").head(50)
    for name, spec in SYNTHESIZERS.items():
        if spec.missing():
            continue
        synth = build(name, {}, frame, seed=11, noise_key=2**100 + 3)
        if spec.seed_argument:
            got = getattr(synth, spec.seed_argument)
            assert got == (2**100 + 3 if spec.private else 11), name
    assert {n for n, s in SYNTHESIZERS.items() if s.private} == {"mst", "aim"}


def _integers(value) -> set[int]:  # noqa: ANN001
    """Every integer a JSON value holds, in numbers and inside strings."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, float):
        return {int(value)} if value.is_integer() else set()
    if isinstance(value, str):
        return {int(d) for d in re.findall(r"\d+", value) if len(d) < 30}
    if isinstance(value, dict):
        return set().union(*map(_integers, value.values()), *map(_integers, value.keys()))
    if isinstance(value, list):
        return set().union(*map(_integers, value)) if value else set()
    return set()


def _rebuilds(folder, frame, integers: set[int]) -> list[int]:  # noqa: ANN001
    """The integers with which the project's own split gives the release's training rows,
    tried as the split's seed and as the study seed it derives from. The positions depend on
    the number of records alone (no strata): split here without columns, 8x faster."""
    rows = json.loads((folder / SPLIT_FILE).read_text())
    train = sorted(rows["train_rows"])
    audit = len(rows["audit_rows"]) / len(frame)
    hits = []
    for i in sorted(integers):
        for seed in {i % 2**64, derive(i % 2**64, 0)}:
            sp = split(frame[[]], train_fraction=0.5, seed=seed, audit_fraction=audit)
            if sorted(sp.train_positions.tolist()) == train:
                hits.append(i)
    return hits


@pytest.mark.slow
def test_public_files_cannot_rebuild_the_split_and_the_custodian_file_can(tmp_path, capsys):
    frame = read_builtin("builtin:fair")
    folders = {}
    for public in (False, True):
        base = tmp_path / ("public" if public else "secret")
        base.mkdir()
        study = tuner.tune(write_config(base, n_trials=2, synthesizers=("cart",),
                                        public_seed=public))
        assert study.release_folder is not None
        folders[public] = base / "out"
    out = folders[False]
    manifest = json.loads((out / "release" / "manifest.json").read_text())
    assert manifest["randomness"]["secret"] is True
    assert "seeds" not in manifest and '"seed"' not in json.dumps(manifest)
    assert "vulnerability" not in json.dumps(manifest["audit"])
    public_text = [manifest] + [(out / "release" / f).read_text()
                                for f in ("report.md", "report.html")]
    integers = set().union(*map(_integers, public_text)) | set(range(0, 1000))
    assert _rebuilds(out, frame, integers) == []
    # the check can fail: a public-seed study's split is rebuilt from its seed (7) alone
    assert 7 in _rebuilds(folders[True], frame, {7})
    pub = json.loads((folders[True] / "release" / "manifest.json").read_text())
    assert pub["randomness"]["secret"] is False and "PUBLIC SEED" in pub["randomness"]["note"]

    # the custodian's file: owner-only, the secret and the released trial's seeds; the split
    # follows from it
    kept = out / CUSTODIAN_FILE
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    entry = json.loads(kept.read_text())["studies"]["t"]
    secret = decode(entry["secret"], "seeds.json")
    assert secret is not None and entry["release"]["trial"] == manifest["trial"]
    assert entry["release"]["audit_vulnerability"]
    # a 128-bit split key: no search of 2**32 split seeds finds it
    assert split_seed(7, secret) >= 2**64 and split_seed(7, None) == derive(7, 0)
    sp = split(frame, train_fraction=0.5, seed=split_seed(7, secret),
               audit_fraction=len(json.loads((out / SPLIT_FILE).read_text())["audit_rows"])
               / len(frame))
    assert sorted(sp.train_positions.tolist()) == sorted(
        json.loads((out / SPLIT_FILE).read_text())["train_rows"])

    # the release made again byte for byte (from the storage; then with the storage's copy of
    # the secret gone and only seeds.json left, a new study would take the file's secret)
    before = (out / "release" / "synthetic.csv").read_bytes()
    shutil.rmtree(out / "release")
    assert main(["release", str(out)]) == 0
    capsys.readouterr()
    assert (out / "release" / "synthetic.csv").read_bytes() == before
    assert np.isclose(json.loads((out / "release" / "manifest.json").read_text())["metrics"]["m"],
                      manifest["metrics"]["m"])


def test_a_new_study_takes_the_secret_the_custodian_file_kept(tiny_config, capsys):
    from tuner.search import _secret as study_secret

    cfg = tiny_config()
    cfg.study.output.mkdir(parents=True, exist_ok=True)
    study_secret.record_new(cfg.study.output, cfg.study.name, 2**120 + 9,
                            identity=study_secret.identity(cfg, "fp"))
    # the storage was lost: the very same study (data and config) takes the file's secret
    assert study_secret.resolve(cfg, None, "fp") == (2**120 + 9, None)
    # other data, another config or another name: a secret of its own (the same noise draws in
    # two different releases would reveal what the noise hides)
    for other, fp in ((cfg, "other data"), (dataclass_replace(cfg, n_trials=9), "fp"),
                      (dataclass_replace(cfg, name="other"), "fp")):
        fresh = study_secret.resolve(other, None, fp)[0]
        assert fresh is not None and fresh != 2**120 + 9
    # a new study of that name keeps the earlier entry in the file's replaced list
    study_secret.record_new(cfg.study.output, cfg.study.name, 5)
    kept = study_secret.read(cfg.study.output)
    assert kept["studies"]["t"]["secret"] == encode(5)
    assert kept["replaced"][0]["secret"] == encode(2**120 + 9)
    # an existing study keeps what it ran with, whatever the config now says
    secret, note = study_secret.resolve(cfg, {"secret": ""})
    assert secret is None and "public seeds" in (note or "")
    assert stat.S_IMODE(os.stat(cfg.study.output / CUSTODIAN_FILE).st_mode) == 0o600


def dataclass_replace(cfg, **study):  # noqa: ANN001, ANN201
    import dataclasses

    return dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, **study))


def test_the_dashboard_hides_the_secret_and_the_audits():
    import optuna

    from tuner.dashboard import FeasibilityStorage

    study = optuna.create_study(study_name="s")
    for key, value in (("secret", "ab" * 16), ("audit:3", {"seed": 5}), ("n_train", 10)):
        study.set_user_attr(key, value)
    shown = FeasibilityStorage(study._storage)
    sid = study._study_id
    for attrs in (shown.get_study_user_attrs(sid), shown.get_all_studies()[0].user_attrs):
        assert attrs["n_train"] == 10
        assert "ab" * 16 not in str(attrs) and "'seed'" not in str(attrs)
    assert study._storage.get_study_user_attrs(sid)["secret"] == "ab" * 16  # stored as it was


def test_a_worker_reading_a_study_being_made_finds_none_or_the_whole_one(tiny_config,
                                                                          monkeypatch):
    """Workers started together: one makes the study, writing its attributes one at a time;
    another reads it between two writes (prepare's recorded_split). It must find no study
    (then it retries with the maker's secret) or the whole one, never a study without its
    split, which would be refused as made before 0.1.0 (seen once in a full run under load,
    when such a study was read as one without an audit set: exit 2, "split its data
    otherwise")."""
    import optuna

    from tuner.search._context import prepare
    from tuner.search._storage import open_study
    from tuner.search._stored_split import recorded_split

    ctx = prepare(tiny_config())
    seen = []
    write = optuna.Study.set_user_attr

    def write_then_read(study, key, value):
        write(study, key, value)
        seen.append((key, recorded_split(ctx.storage_url, ctx.cfg.study.name)))

    monkeypatch.setattr(optuna.Study, "set_user_attr", write_then_read)
    open_study(ctx)
    assert len(seen) >= 4
    for key, found in seen:
        assert found is None or "train_fraction" in found, (key, found)
    assert seen[-1][1] is not None and seen[-1][1]["audit_fraction"] == ctx.cfg.data.audit_fraction
