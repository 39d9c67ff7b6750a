"""synthpop's ``disclosure()``: identity and attribute disclosure measures from key-target tables.

Reference: G. M. Raab, B. Nowok, C. Dibben, "Practical privacy metrics for synthetic data"
(arXiv:2406.16826; also synthpop's vignette ``disclosure.Rnw``, revised February 2026 for
synthpop 1.9-3), implemented in R's synthpop as ``disclosure()`` (``R/disclosure.R``). This
module computes the numbers of that R code (commit 9cc3081, version 1.9-3; checked against it
by tests/risk/test_disclosure.py), under synthpop's names and on its scale (percentages), with
group-bys instead of synthpop's dense key x target tables.

Attacker: knows the values of the *keys* of a person and looks them up in the synthetic data;
for attribute disclosure they read the *target* off the synthetic records with that key.
With ``d_tq`` the original's key (q) x target (t) counts, ``s_tq`` the synthetic's, ``N_d``/
``N_s`` the numbers of records, ``d_.q = sum_t d_tq`` and ``pd_tq = d_tq / d_.q`` (likewise
``s_.q``, ``ps_tq``; 0 when the key is absent), every measure in percent (the paper's
Appendix 1, eqs. 1-9, and Appendix 2):

* identity: ``UiO`` = records unique on the keys in the original / N_d; ``UiS`` = synthetic
  records unique in the synthetic / N_s; ``UiOiS`` = original uniques whose key occurs in the
  synthetic / N_d; ``repU`` = original uniques whose key is also unique in the synthetic / N_d
  (replicated uniques).
* attribute: ``Dorig`` = original records whose key has one target in the original
  (``pd_tq = 1``) / N_d; ``Dsyn`` likewise for the synthetic / N_s; ``iS`` (the paper's iSO) =
  original records whose key occurs in the synthetic; ``DiS`` = ... whose key has one target in
  the synthetic; ``DiSCO`` = ... and that target is their own (``ps_tq = 1``: *disclosive in
  synthetic, correct in original*, the paper's headline measure); ``DiSDiO`` = DiSCO records
  whose key also has one target in the original; ``max_denom``/``mean_denom``: the largest and
  the mean non-zero DiSCO cell count.
* CAP (synthpop's names): ``baseCAPd = sum_t (d_t. / N_d)^2``; ``CAPd = sum_tq pd_tq d_tq /
  N_d`` (the original's own CAP); ``CAPs`` likewise on the synthetic; ``DCAP = sum_tq ps_tq
  d_tq / N_d`` (the mean CAP of original records against the synthetic, 0 for unmatched keys;
  the vignette's "DCAPorig"); ``TCAP = DiSCO count / sum of d_.q over keys with s_.q > 0``
  (R: ``sum(tab_DiSCO) / sum(tab_kd[tab_ks > 0]) * 100``): the DiSCO share among original
  records whose key occurs in the synthetic, DiSCO / iS when nothing is excluded.

  Caution: the February 2026 vignette (Appendix 2, last equation) defines TCAP with the
  smaller denominator ``sum_q d_.q [some ps_tq = 1]``, i.e. DiSCO / DiS, but synthpop's code at
  the same commit computes the formula above; this module follows the code. DiSCO / DiS is
  ``DiSCO / DiS * 100`` of this result, or ``disco_over_dis`` of :func:`risk.cap.cap`.

Exclusions (synthpop's order; each record counted under its first reason): target levels in
``not_targetlev``; the missing target when ``use_target_na=False`` (only when the original has
one); keys whose value is missing for a key with ``use_keys_na`` False; (key level, target level)
pairs named by ``exclude_keys``/``exclude_keylevs``/``exclude_targetlevs``; and with
``exclude_ov_denom_lim=True`` cells whose count exceeds ``denom_lim``. As in synthpop, the masks
(``p = 1``, key occurs in synthetic) are taken *before* the exclusions, each table's cells are
then zeroed, the proportions of the CAP measures are recomputed after them, ``baseCAPd`` uses
the target counts before them, and every percentage keeps the full N_d or N_s as denominator.

Variables: a missing value is a level of its own (synthpop's ``"Missing"``). Numeric keys and
targets are compared by value (synthpop turns them into factors) unless ``ngroups_keys`` /
``ngroups_target`` ask for synthpop's grouping (``group_num``): breaks at the type-7 quantiles of
the original's and *all* synthetic sets' values together (``classInt`` style ``"quantile"``;
``"equal"`` when that gives fewer than 3 groups; one class per value when there are no more
values than groups), intervals closed on the left, and values listed in ``cont_na`` kept as
groups of their own.

Where synthpop 1.9-3's R code departs from the definitions above, this module follows the
definitions (tests/risk/fixtures/synthpop_disclosure/README.md shows each case):

1. a single numeric key, or an ungrouped numeric target, whose set of values in the original
   and in a synthetic set differ on one side only: R aligns its two tables by position, one in
   numeric and one in text order, and so mixes up levels; here levels are matched by value.
2. ``UiOiS`` with a single factor key: R counts every *level* of the factor as occurring in the
   synthetic data, used or not; here a key occurs when a synthetic record has it.
3. ``usekeysNA``/``ngroups_keys`` vectors when ``keys`` are not in the data's column order: R
   reorders the keys but not (or wrongly) these vectors; here they apply to the keys as given.
   (Keys are reported in the data's column order, as synthpop does.)
4. with m > 1, R's ``synorig.compare`` silently keeps the first synthetic set only when it must
   adjust a type or a factor level; grouping stops with an error when the m sets differ in
   size; several ``not.targetlev`` values fail in R >= 4.3. None of these happens here.
5. R pastes key values with ``" | "`` and names missing values ``"Missing"``, so a level
   containing ``" | "`` or equal to ``"Missing"`` can collide; here levels are compared as codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from risk._arguments import argument, takes
from risk._disclosure_coding import MISSING_LABEL, _factor, _grouped, _Variable
from risk._disclosure_tables import (
    MEASURES,
    TABLES,
    DisclosureResult,
    DisclosureSetResult,
    ExclusionCounts,
    Exclusions,
    OneWayCheck,
    TwoWayCheck,
    _evaluate,
    _record_reasons,
    _Setup,
)
from risk._encode import combine_many
from risk._validation import (
    RiskInputError,
    as_synthetic_sets,
    check_column_list,
    check_column_name,
    check_columns,
    check_frame,
    column_kinds,
)

__all__ = [
    "MEASURES",
    "MISSING_LABEL",
    "TABLES",
    "DisclosureResult",
    "DisclosureSetResult",
    "ExclusionCounts",
    "Exclusions",
    "OneWayCheck",
    "TwoWayCheck",
    "disclosure",
]

# ------------------------------------------------------------------------------ validation



def _per_key(value: Any, name: str, keys: list[str], check: Any,
             default: Any) -> dict[str, Any]:
    """A scalar, a sequence aligned with ``keys`` (as given) or a mapping (keys it leaves out
    take ``default``), as {key: value}."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in keys]
        if unknown:
            raise RiskInputError(f"`{name}` names {unknown!r}, which are not keys {keys!r}.")
        return {k: check(value.get(k, default)) for k in keys}
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != len(keys):
            raise RiskInputError(
                f"`{name}` must have one entry per key ({len(keys)}: {keys!r}), got "
                f"{list(value)!r}."
            )
        return {k: check(v) for k, v in zip(keys, value, strict=True)}
    return {k: check(value) for k in keys}


def _flag(name: str):
    def check(value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"`{name}` must be True or False, got {value!r}.")
        return bool(value)

    return check


def _ngroups(name: str):
    def check(value: Any) -> int:
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"`{name}` must be None, 0 or an integer >= 2, got {value!r}.")
        if value < 0 or value == 1:
            raise RiskInputError(
                f"`{name}` must be None, 0 (no grouping) or >= 2 (1 is refused as in "
                f"synthpop), got {value!r}."
            )
        return int(value)

    return check


def _pair(value: Any, name: str) -> tuple[float, float]:
    ok = isinstance(value, (list, tuple)) and len(value) == 2 and all(
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_))
        for v in value
    )
    if not ok:
        raise TypeError(f"`{name}` must be a pair (count, percent) of numbers, got {value!r}.")
    count, percent = float(value[0]), float(value[1])
    if not (0.0 <= count < float("inf") and 0.0 <= percent <= 100.0):
        raise RiskInputError(
            f"`{name}` must be (count, percent) with a finite count >= 0 and 0 <= percent <= "
            f"100, got {value!r}."
        )
    return count, percent


def _levels(value: Any) -> list[Any]:
    if value is None or (isinstance(value, str) and value == ""):
        return []
    if isinstance(value, (list, tuple, np.ndarray, pd.Index)):
        return list(value)
    return [value]


# ------------------------------------------------------------------------------ interface


@takes("denom_lim")
def disclosure(
    train: pd.DataFrame,
    synthetic: pd.DataFrame | Sequence[pd.DataFrame],
    *,
    keys: Sequence[str] | str,
    target: str,
    denom_lim: int = 5,
    exclude_ov_denom_lim: bool = False,
    not_targetlev: Any = None,
    use_target_na: bool = True,
    use_keys_na: bool | Sequence[bool] | Mapping[str, bool] = True,
    exclude_keys: Sequence[str] | str | None = None,
    exclude_keylevs: Any = None,
    exclude_targetlevs: Any = None,
    ngroups_target: int | None = None,
    ngroups_keys: int | Sequence[int] | Mapping[str, int] | None = None,
    cont_na: Mapping[str, Sequence[Any]] | None = None,
    thresh_1way: tuple[float, float] = (50, 90),
    thresh_2way: tuple[float, float] = (4, 80),
) -> DisclosureResult:
    """synthpop's ``disclosure()`` (Raab, Nowok & Dibben 2024), in percent, for m synthetic sets.

    Options carry synthpop's names in snake case and its defaults (synthpop's name in
    brackets); the module docstring has the definitions and the few places where synthpop's
    R code departs from them.

    Parameters
    ----------
    train, synthetic:
        The real records the synthetic data were made from (synthpop's ``object$data``) and
        one synthetic DataFrame or a list of m (each set is measured against ``train``;
        the result holds each set and the means).
    keys, target:
        The intruder's key variables and the target they infer (not one of the keys).
    denom_lim, exclude_ov_denom_lim:
        With ``exclude_ov_denom_lim=True`` (``exclude_ov_denom_lim``) the cells of every table
        with more than ``denom_lim`` records are left out (``denom_lim``, default 5).
    not_targetlev:
        Target level(s) left out of every table (``not.targetlev``).
    use_target_na, use_keys_na:
        ``False`` leaves out records with a missing target (``usetargetNA``) or a missing value
        of the key (``usekeysNA``: one flag, one per key as given, or ``{key: flag}``).
    exclude_keys, exclude_keylevs, exclude_targetlevs:
        Equal-length lists: the records with key ``exclude_keys[i]`` at level
        ``exclude_keylevs[i]`` and target ``exclude_targetlevs[i]`` are left out
        (``exclude.keys`` etc.). A missing level is named ``None``; a grouped one by its label.
    ngroups_target, ngroups_keys:
        Numeric target/keys cut into this many groups (``ngroups_target``/``ngroups_keys``:
        ``None`` or 0 compares values exactly; keys: one number, one per key as given, or a
        mapping; non-numeric keys are never grouped).
    cont_na:
        ``{column: [values]}``: special values of numeric columns kept out of the groups as
        groups of their own (``cont.na``); each must occur in the training data.
    thresh_1way, thresh_2way:
        Thresholds (count, percent) of synthpop's 1-way and 2-way checks (``thresh_1way``,
        ``thresh_2way``), see :class:`OneWayCheck` and :class:`TwoWayCheck`.
    """
    sets = as_synthetic_sets(synthetic)
    frames = {"train": train, **{f"synthetic[{i}]": s for i, s in enumerate(sets)}}
    given = check_column_list(keys, "keys")
    target = check_column_name(target, "target")
    if target in given:
        raise RiskInputError(
            f"`target` must not be one of the `keys`, got target={target!r} and "
            f"keys={given!r}."
        )
    for name, frame in frames.items():
        check_frame(frame, name)
        check_columns(frame, name, [*given, target], "key/target")
    kinds = column_kinds(frames, [*given, target])
    argument(denom_lim, "denom_lim")
    _flag("exclude_ov_denom_lim")(exclude_ov_denom_lim)
    _flag("use_target_na")(use_target_na)
    thresholds = _pair(thresh_1way, "thresh_1way"), _pair(thresh_2way, "thresh_2way")
    na_flags = _per_key(use_keys_na, "use_keys_na", given, _flag("use_keys_na"), True)
    key_groups = _per_key(ngroups_keys, "ngroups_keys", given, _ngroups("ngroups_keys"), None)
    target_groups = _ngroups("ngroups_target")(ngroups_target)
    specials = _check_cont_na(cont_na, train, [*given, target])

    ordered = [c for c in train.columns if c in given]  # synthpop's key order
    frame_list = list(frames.values())

    def variable(col: str, groups: int) -> _Variable:
        columns = [f[col] for f in frame_list]
        if groups and kinds[col] == "numeric":
            return _grouped(col, columns, groups, specials.get(col, ()))
        return _factor(col, columns)

    target_var = variable(target, target_groups)
    key_vars = [variable(k, key_groups[k]) for k in ordered]
    not_target = [target_var.code_of(v, "not_targetlev") for v in _levels(not_targetlev)]
    pairs, pair_text = _excluded_pairs(exclude_keys, exclude_keylevs, exclude_targetlevs,
                                       ordered, key_vars, target_var)
    has_na_target = bool((target_var.codes[0] == target_var.missing).any())
    na_keys = [i for i, k in enumerate(ordered) if not na_flags[k]]
    struct = [
        _record_reasons(target_var, key_vars, f, not_target,
                        not use_target_na and has_na_target, na_keys, pairs)
        for f in range(len(frame_list))
    ]
    cards = [len(v.labels) for v in key_vars]
    key_ids = combine_many(
        [np.column_stack([v.codes[f] for v in key_vars]) for f in range(len(frame_list))], cards
    )
    options = dict(denom_lim=int(denom_lim), exclude_ov_denom_lim=bool(exclude_ov_denom_lim),
                   thresh_1way=thresholds[0], thresh_2way=thresholds[1])
    setup = _Setup(ordered, target_var, key_vars, key_ids, struct, options)
    per_set = tuple(_evaluate(setup, j) for j in range(1, len(frame_list)))
    means = {m: float(np.mean([getattr(r, m) for r in per_set])) for m in MEASURES}
    flagged_1 = [r.check_1way for r in per_set if r.check_1way is not None]
    flagged_2 = [r.check_2way for r in per_set if r.check_2way]
    grouped = [v for v in [target_var, *key_vars] if v.grouped]
    return DisclosureResult(
        **means,
        check1=f"Check  {target}  level  {flagged_1[-1].Level}" if flagged_1 else "",
        check2=f"{len(flagged_2[-1])} pairs need checks" if flagged_2 else "",
        n_train=len(train),
        n_sets=len(sets),
        keys=tuple(ordered),
        target=target,
        denom_lim=int(denom_lim),
        exclude_ov_denom_lim=bool(exclude_ov_denom_lim),
        not_targetlev=tuple(target_var.labels[c] for c in not_target),
        use_target_na=bool(use_target_na),
        use_keys_na=tuple(na_flags[k] for k in ordered),
        excluded_pairs=tuple(pair_text),
        grouped=tuple(v.name for v in grouped),
        group_labels=tuple(f"{v.name}: {', '.join(v.labels[:-1])}" for v in grouped),
        thresh_1way=thresholds[0],
        thresh_2way=thresholds[1],
        per_set=per_set,
    )


def _check_cont_na(cont_na: Any, train: pd.DataFrame, columns: list[str]) -> dict[str, list]:
    if cont_na is None:
        return {}
    if not isinstance(cont_na, Mapping):
        raise TypeError(f"`cont_na` must be a mapping {{column: [values]}}, got {cont_na!r}.")
    out: dict[str, list] = {}
    for col, values in cont_na.items():
        if col not in train.columns:
            raise RiskInputError(
                f"`cont_na` names {col!r}, which is not a column of `train`."
            )
        vals = [v for v in _levels(values) if not pd.isna(v)]
        absent = [v for v in vals if not (train[col] == v).any()]
        if absent:
            raise RiskInputError(
                f"`cont_na` lists {absent!r} for {col!r}, but `train` has no such value."
            )
        if col in columns:
            out[col] = vals
    return out


def _excluded_pairs(keys: Any, keylevs: Any, targetlevs: Any, ordered: list[str],
                    key_vars: list[_Variable], target_var: _Variable
                    ) -> tuple[list[tuple[int, int, int]], list[str]]:
    key_list, key_levels, target_levels = _levels(keys), _levels(keylevs), _levels(targetlevs)
    if not (len(key_list) == len(key_levels) == len(target_levels)):
        raise RiskInputError(
            "`exclude_keys`, `exclude_keylevs` and `exclude_targetlevs` must have the same "
            f"length, got {key_list!r}, {key_levels!r} and {target_levels!r}."
        )
    pairs, text = [], []
    for key, key_level, target_level in zip(key_list, key_levels, target_levels, strict=True):
        if key not in ordered:
            raise RiskInputError(f"`exclude_keys` names {key!r}, which is not one of {ordered!r}.")
        i = ordered.index(key)
        k_code = key_vars[i].code_of(key_level, "exclude_keylevs")
        t_code = target_var.code_of(target_level, "exclude_targetlevs")
        pairs.append((i, k_code, t_code))
        text.append(f"{key}={key_vars[i].labels[k_code]}|{target_var.labels[t_code]}")
    return pairs, text
