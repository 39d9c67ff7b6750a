"""The study's secret and the custodian-only file that keeps it (design §9.2).

A split drawn from a seed that a public file names, or that anyone can guess (0, 42, the trial
number), is no secret: with the table and the project's own ``split`` the training rows are
rebuilt, which is exactly what ``split.json`` must never tell. So every study that is not
``public_seed = true`` draws 128 bits from the operating system when it is made, records them
in its Optuna storage (custodian-side, like ``study.db`` itself: every worker on every host
makes the same split from them) and in ``seeds.json`` beside ``split.json`` in the output
folder, readable by its owner only. Every seed of the study (split, trials, release audit)
and the noise key of a differentially private mechanism are keyed with it
(:func:`tuner._common.seeding.derive`); nothing released names any of them. The custodian re-creates
the release exactly from the storage, or from ``seeds.json`` when the storage is lost.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from tuner._common import attrs
from tuner._common.seeding import SECRET_BITS, new_secret
from tuner.config import Config, ConfigError

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
    if text is None or text == "":
        return None
    if not isinstance(text, str) or not re.fullmatch(f"[0-9a-f]{{{SECRET_BITS // 4}}}", text):
        raise ConfigError(f"{where} holds a malformed study secret (expected "
                          f"{SECRET_BITS // 4} lowercase hex digits): restore it from a backup")
    return int(text, 16)


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
    return _write(output, studies, content.get("replaced", []))


def _write(output: Path, studies: dict[str, Any], replaced: list[Any]) -> Path:
    path = output / CUSTODIAN_FILE
    # mkstemp: a new file of mode 0600 that nobody could plant a link at beforehand
    fd, staging = tempfile.mkstemp(prefix=f".{CUSTODIAN_FILE}.", dir=output)
    with os.fdopen(fd, "w") as handle:
        json.dump({"note": NOTE, "studies": studies} | ({"replaced": replaced} if replaced
                                                        else {}), handle, indent=2)
    os.replace(staging, path)  # whole or not at all: a secret half written is a secret lost
    return path


def record_new(output: Path, study: str, secret: int | None, **fields: Any) -> Path:
    """Record a new study's secret; an entry of an earlier study of that name with another
    secret moves to the file's ``replaced`` list first (kept: it re-creates that study's
    releases), never overwritten."""
    content = read(output)
    studies = content.get("studies")
    studies = studies if isinstance(studies, dict) else {}
    old = studies.get(study)
    if isinstance(old, dict) and old.get("secret") != encode(secret):
        replaced = [*content.get("replaced", []), {"study": study, **old}]
        _write(output, {k: v for k, v in studies.items() if k != study}, replaced)
    return record(output, study, secret=encode(secret), **fields)


def identity(cfg: Config, fingerprint: str) -> str:
    """What must match for a new study to take a secret the custodian file kept: the data's
    fingerprint and the whole config (its sections as resolved). Reusing a secret for other
    data or another config would give a DP mechanism the same noise draws in two releases
    (y1 = x + s1 g and y2 = x + s2 g reveal x), so only a rerun of the very same study may."""
    text = json.dumps({"data": cfg.data.__dict__, "study": cfg.study.__dict__,
                       "risk": dict(cfg.risk), "utility": cfg.utility.__dict__,
                       "audit": cfg.audit.__dict__, "spaces": cfg.spaces,
                       "fingerprint": fingerprint}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def resolve(cfg: Config, recorded: dict[str, Any] | None,
            fingerprint: str = "") -> tuple[int | None, str | None]:
    """The secret of the study ``cfg`` names, and a note when it is not what the config asks.

    ``recorded``: what its storage recorded (:func:`tuner.search._stored_split.recorded_split`),
    None for a study not made yet. An existing study keeps the randomness its trials ran with:
    its recorded secret, or none when it was made public or before secrets. A new study takes
    the one the custodian file kept for its name when the data and the config are the very
    same (:func:`identity`; the storage was lost: the study runs again as it ran), else a
    fresh one; with ``public_seed`` none.
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
    if kept.get("identity") != identity(cfg, fingerprint):
        return new_secret(), None  # another study of that name: a secret of its own
    secret = decode(kept.get("secret"), str(cfg.study.output / CUSTODIAN_FILE))
    return (secret if secret is not None else new_secret()), None
