"""The study's secret and the custodian-only file that keeps it (design §9.2).

A split drawn from a seed that a public file names, or that anyone can guess (0, 42, the trial
number), is no secret: with the table and the project's own ``split`` the training rows are
rebuilt, which is exactly what ``split.json`` must never tell. So every study that is not
``public_seed = true`` draws 128 bits from the operating system when it is made, records them
in its Optuna storage (custodian-side, like ``study.db`` itself: every worker on every host
makes the same split from them) and in ``seeds.json`` beside ``split.json`` in the output
folder, readable by its owner only. Every seed of the study (split, trials, release audit)
and the noise key of a differentially private mechanism are keyed with it
(:func:`tuner.seeding.derive`); nothing released names any of them. The custodian re-creates
the release exactly from the storage, or from ``seeds.json`` when the storage is lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tuner import attrs
from tuner.config import Config, ConfigError
from tuner.seeding import SECRET_BITS, new_secret

CUSTODIAN_FILE = "seeds.json"
NOTE = ("CONFIDENTIAL, custodian-only, like split.json: each study's secret, from which its "
        "split, every trial's seed and the noise of a differentially private mechanism are "
        "derived; with it and the data file anyone can tell who was in the training data. "
        "Never share it with the release.")


def encode(secret: int | None) -> str:
    """The secret as the study stores it: 32 hex digits, or "" for a public-seed study."""
    return "" if secret is None else f"{secret:0{SECRET_BITS // 4}x}"


def decode(text: str | None, where: str) -> int | None:
    """The secret stored as ``text`` (None: public seeds); a malformed one is refused."""
    if not text:
        return None
    try:
        value = int(text, 16)
    except ValueError:
        value = -1
    if not 0 <= value < 2**SECRET_BITS or len(text) != SECRET_BITS // 4:
        raise ConfigError(f"{where} holds a malformed study secret ({len(text)} characters; "
                          f"expected {SECRET_BITS // 4} hex digits): restore it from a backup")
    return value


def read(output: Path) -> dict[str, Any]:
    """The custodian file of ``output`` ({} when there is none)."""
    path = output / CUSTODIAN_FILE
    if not path.exists():
        return {}
    try:
        content = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}): restore it from a backup") \
            from exc
    return content if isinstance(content, dict) else {}


def record(output: Path, study: str, **fields: Any) -> Path:
    """Merge ``fields`` into study ``study``'s entry of the custodian file, written with mode
    0600 (created so, not widened after: the secret is never readable by others)."""
    content = read(output)
    studies = content.get("studies") if isinstance(content.get("studies"), dict) else {}
    assert isinstance(studies, dict)
    studies[study] = {**studies.get(study, {}), **fields}
    path = output / CUSTODIAN_FILE
    staging = path.with_name(f".{CUSTODIAN_FILE}.{os.getpid()}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"note": NOTE, "studies": studies}, handle, indent=2)
    os.chmod(staging, 0o600)
    os.replace(staging, path)  # whole or not at all: a secret half written is a secret lost
    return path


def resolve(cfg: Config, recorded: dict[str, Any] | None) -> tuple[int | None, str | None]:
    """The secret of the study ``cfg`` names, and a note when it is not what the config asks.

    ``recorded``: what its storage recorded (:func:`tuner.search.stored_split.recorded_split`),
    None for a study not made yet. An existing study keeps the randomness its trials ran with:
    its recorded secret, or none when it was made public or before secrets. A new study takes
    the one the custodian file kept for its name (the storage was lost: the release is made
    again from the file), else a fresh one; with ``public_seed`` none.
    """
    name = cfg.study.name
    if recorded is not None:
        secret = decode(recorded.get(attrs.SECRET), f"study {name!r}'s storage")
        if secret is None and not cfg.study.public_seed:
            return None, (f"study {name!r} was made with public seeds (public_seed, or before "
                          "study secrets): it keeps them, so its split follows from "
                          f"study.seed = {cfg.study.seed}; a new study gets a secret")
        if secret is not None and cfg.study.public_seed:
            return secret, (f"study {name!r} was made with a secret: it keeps it "
                            "(study.public_seed = true applies to new studies only)")
        return secret, None
    if cfg.study.public_seed:
        return None, None
    kept = (read(cfg.study.output).get("studies") or {}).get(name) or {}
    secret = decode(kept.get("secret"), str(cfg.study.output / CUSTODIAN_FILE))
    return (secret if secret is not None else new_secret()), None
