"""The synthesisers: what a trial fits and samples.

The family registry (:data:`SYNTHESIZERS`, one :class:`SynthesizerSpec` each: SDV's Gaussian
copula, CTGAN, TVAE and CopulaGAN, our sequential CART, the differentially private MST and AIM),
their search spaces as data, building, fitting and sampling them seeded, and partial synthesis
(the kept columns row by row, the synthesised ones drawn given them).
Modules: ``families``, ``spaces``, ``synthesizers``, ``cart``, ``dp``, ``dp_mechanisms``,
``partial``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner._common.lazy_exports import lazy_exports

# what this room offers, by the module that holds it ("module:name" where the name differs):
# imported when first used (PEP 562), so that importing the room costs nothing
_EXPORTS = {
    "CARTSynthesizer": "cart",
    "PartialSynthesis": "partial",
    "SYNTHESIZERS": "families",
    "SynthesizerSpec": "families",
    "register": "families",
    "synthesize": "synthesizers",
    "synthesize_partial": "partial",
    "unregister": "families",
}

if TYPE_CHECKING:  # the exports' types, for mypy and editors (imported lazily at run time)
    from tuner.synthesis.cart import CARTSynthesizer
    from tuner.synthesis.families import SYNTHESIZERS, SynthesizerSpec, register, unregister
    from tuner.synthesis.partial import PartialSynthesis, synthesize_partial
    from tuner.synthesis.synthesizers import synthesize


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
