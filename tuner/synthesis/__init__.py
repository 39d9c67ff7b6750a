"""The synthesisers: what a trial fits and samples.

The family registry (:data:`SYNTHESIZERS`, one :class:`SynthesizerSpec` each: SDV's Gaussian
copula, CTGAN, TVAE and CopulaGAN, our sequential CART, the differentially private MST and AIM),
their search spaces as data, building, fitting and sampling them seeded, and partial synthesis
(the kept columns row by row, the synthesised ones drawn given them), and the neural families'
fits looked at every few epochs (checkpoints), their data transforms fitted once per table.
Modules: ``_families``, ``_spaces``, ``_synthesizers``, ``_checkpoints``, ``_transforms``,
``_cart``, ``_dp``, ``_dp_mechanisms``, ``_partial``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "CARTSynthesizer": "_cart",
    "PartialSynthesis": "_partial",
    "SYNTHESIZERS": "_families",
    "StopTraining": "_checkpoints",
    "Synthesis": "_synthesizers",
    "SynthesizerSpec": "_families",
    "conditioning_problem": "_partial",
    "dp_as_released": "_synthesizers",
    "kept_columns": "_partial",
    "narrow": "_spaces",
    "register": "_families",
    "rungs": "_checkpoints",
    "synthesize": "_synthesizers",
    "synthesize_checkpoints": "_synthesizers",
    "synthesize_partial": "_partial",
    "unregister": "_families",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.synthesis._cart import CARTSynthesizer
    from tuner.synthesis._checkpoints import StopTraining, rungs
    from tuner.synthesis._families import SYNTHESIZERS, SynthesizerSpec, register, unregister
    from tuner.synthesis._partial import (
        PartialSynthesis,
        conditioning_problem,
        kept_columns,
        synthesize_partial,
    )
    from tuner.synthesis._spaces import narrow
    from tuner.synthesis._synthesizers import (
        Synthesis,
        dp_as_released,
        synthesize,
        synthesize_checkpoints,
    )


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
