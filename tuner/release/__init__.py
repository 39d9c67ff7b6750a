"""The release: the best feasible trial re-created, audited and exported for a review board.

The trial's data made again and checked (its own data, scored in full), the release audit
(the gate on the sealed audit set, the per-record membership audit that knows the generator),
the atomic export with its manifest, the report (Markdown and self-contained HTML) and its
summary block (the figures are :mod:`tuner.plots`).
Modules: ``export``, ``recreate``, ``refusals``, ``audit``, ``audit_backend``, ``audit_set``,
``manifest``, ``report``, ``report_audit``, ``summary``.
"""

from __future__ import annotations

from tuner.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "NoFeasibleTrial": "recreate",
    "ReleaseRejected": "recreate",
    "ReleasedFamily": "audit",
    "audit_set_check": "audit_set",
    "export_release": "export:export",
    "plan": "audit",
    "release_audit": "audit",
    "release_note": "export",
    "summary_lines": "summary:summary",
    "winners_curse": "audit_set",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
