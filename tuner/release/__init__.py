"""The release: the best feasible trial re-created, audited and exported for a review board.

The trial's data made again and checked (its own data, scored in full), the release audit
(the gate on the sealed audit set, the per-record membership audit that knows the generator),
the atomic export with its manifest, the report (Markdown and self-contained HTML) and its
summary block (the figures are :mod:`tuner.release._plots`).
Modules: ``_export``, ``_recreate``, ``_refusals``, ``_candidates`` (which trial is audited
next, after a refusal), ``_audit``, ``_audit_plan`` (its design and
time), ``_audit_backend``, ``_audit_set``,
``_audit_verdict`` (the candidate's decision), ``_manifest``, ``_report``, ``_report_audit``,
``_summary``, ``_fake_columns``, ``_plots`` (the release's figures), ``_budget`` (one time
budget for the trials and the audit), ``_domain`` (what the domain came from, what a DP
family's epsilon covers as released).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "JobBudget": "_budget",
    "Manifest": "_manifest",
    "NoFeasibleTrial": "_recreate",
    "ReleaseRejected": "_recreate",
    "ReleasedFamily": "_audit_plan",
    "audit_set_check": "_audit_set",
    "check_audit_backend": "_audit_backend:check_reachable",
    "check_fits": "_budget",
    "export_release": "_export:export",
    "plan": "_audit_plan",
    "read_manifest": "_manifest",
    "release_audit": "_audit",
    "release_note": "_export",
    "summary_lines": "_summary:summary",
    "winners_curse": "_audit_set",
    "write_report": "_report:write",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.release._audit import release_audit
    from tuner.release._audit_backend import check_reachable as check_audit_backend
    from tuner.release._audit_plan import ReleasedFamily, plan
    from tuner.release._audit_set import audit_set_check, winners_curse
    from tuner.release._budget import JobBudget, check_fits
    from tuner.release._export import export as export_release
    from tuner.release._export import release_note
    from tuner.release._manifest import Manifest, read_manifest
    from tuner.release._recreate import NoFeasibleTrial, ReleaseRejected
    from tuner.release._report import write as write_report
    from tuner.release._summary import summary as summary_lines


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
