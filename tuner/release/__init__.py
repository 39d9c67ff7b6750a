"""The release: the best feasible trial re-created, audited and exported for a review board.

The trial's data made again and checked (its own data, scored in full), the release audit
(the gate on the sealed audit set, the per-record membership audit that knows the generator),
the atomic export with its manifest, the report (Markdown and self-contained HTML) and its
summary block (the figures are :mod:`tuner.release._plots`).
Modules: ``export``, ``recreate``, ``refusals``, ``audit``, ``audit_backend``, ``audit_set``,
``manifest``, ``report``, ``report_audit``, ``summary``, ``fake_columns``, ``_plots`` (the
release's figures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "NoFeasibleTrial": "recreate",
    "ReleaseRejected": "recreate",
    "ReleasedFamily": "audit",
    "audit_set_check": "audit_set",
    "export_release": "export:export",
    "plan": "audit",
    "read_manifest": "manifest",
    "release_audit": "audit",
    "release_note": "export",
    "summary_lines": "summary:summary",
    "winners_curse": "audit_set",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.release.audit import ReleasedFamily, plan, release_audit
    from tuner.release.audit_set import audit_set_check, winners_curse
    from tuner.release.export import export as export_release
    from tuner.release.export import release_note
    from tuner.release.manifest import read_manifest
    from tuner.release.recreate import NoFeasibleTrial, ReleaseRejected
    from tuner.release.summary import summary as summary_lines


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
