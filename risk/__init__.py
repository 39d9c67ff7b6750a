"""Disclosure-risk measures for synthetic data.

pandas DataFrames in, frozen result objects out (each with ``to_dict()`` for MLflow or JSON).
Standalone: imports numpy, pandas, scipy and scikit-learn only, never SDV, Optuna or MLflow.

Every formula is defined in the project's design page, ``docs/design.md``; docstrings cite its
sections as "design §N". One vocabulary: ``train`` is the real frame a generator was fitted on,
``keys`` what an intruder knows of a person.

* :func:`membership_disclosure` - the partition method and its relative F1 "M"
  (El Emam, Mosquera & Fang, JAMIA Open 2022).
* :func:`risk_utility_loss`, :func:`risk_utility_weight` - the same paper's loss.
* :func:`cap`, :func:`cap_per_record` - the CAP family (Elliot 2014; Taub et al. 2018;
  Baillargeon & Charest 2020) and DiSCO.
* :func:`disclosure` - synthpop's ``disclosure()`` measures under synthpop's names and scale
  (Raab, Nowok & Dibben 2024): UiO, UiS, UiOiS, repU, Dorig, Dsyn, iS, DiS, DiSCO, DiSDiO,
  baseCAPd, CAPd, CAPs, DCAP, TCAP.
* :func:`exact_copies`, :func:`replicated_uniques` - synthetic records equal to a training
  record (against the holdout's chance level), and copies of train-unique records (synthpop's
  ``sdc(rm.replicated.uniques = TRUE)``).
* :func:`distance_to_closest_record` - share of synthetic records closer (Gower) to train than
  to holdout, against its expected value.
* :func:`attribute_inference` - ML attribute inference with before/after and holdout baselines.
* :func:`identification_risk` - identification risk of partially synthetic data
  (Reiter & Mitra 2009).
* :func:`hellinger_utility` - 1 - the multivariate Hellinger distance (a utility, design §7).
* :func:`membership_audit`, :func:`vulnerability` - the per-record membership audit that knows
  the generator: shadow games on the most vulnerable records (Stadler et al. 2022; Meeus et al.
  2023), TPR at low FPR and an empirical epsilon lower bound (Carlini et al. 2022; Jagielski
  et al. 2020).
* :func:`column_kind` - how every measure reads a column: numeric, datetime or categorical.
"""

from risk._result import Interval, Result
from risk._validation import RiskInputError, column_kind
from risk.audit import AuditVerdict, MembershipAuditResult, membership_audit, vulnerability
from risk.cap import CAPResult, CAPSetResult, cap, cap_per_record
from risk.copies import ExactCopiesResult, exact_copies, replicated_uniques
from risk.dcr import (
    DCRResult,
    DistanceSummary,
    distance_to_closest_record,
    distances_to_closest_record,
)
from risk.disclosure import DisclosureResult, DisclosureSetResult, disclosure
from risk.identification import (
    IdentificationResult,
    IdentificationSetResult,
    identification_risk,
)
from risk.inference import InferenceResult, attribute_inference
from risk.loss import (
    ACCEPTABLE_M,
    CONTINUOUS_FLOOR,
    PUBLISHED_FLOOR,
    RiskUtilityLoss,
    risk_utility_loss,
    risk_utility_weight,
)
from risk.membership import (
    MIN_MEMBERS,
    MembershipResult,
    membership_disclosure,
    membership_distances,
    naive_f1,
    relative_f1,
)
from risk.utility import hellinger_utility

__all__ = [
    "AuditVerdict",
    "ACCEPTABLE_M",
    "CONTINUOUS_FLOOR",
    "MIN_MEMBERS",
    "PUBLISHED_FLOOR",
    "CAPResult",
    "CAPSetResult",
    "DCRResult",
    "DisclosureResult",
    "DistanceSummary",
    "DisclosureSetResult",
    "ExactCopiesResult",
    "IdentificationResult",
    "IdentificationSetResult",
    "InferenceResult",
    "Interval",
    "MembershipAuditResult",
    "MembershipResult",
    "Result",
    "RiskInputError",
    "RiskUtilityLoss",
    "attribute_inference",
    "cap",
    "cap_per_record",
    "column_kind",
    "disclosure",
    "distance_to_closest_record",
    "distances_to_closest_record",
    "exact_copies",
    "hellinger_utility",
    "identification_risk",
    "membership_audit",
    "membership_disclosure",
    "membership_distances",
    "naive_f1",
    "relative_f1",
    "replicated_uniques",
    "risk_utility_loss",
    "risk_utility_weight",
    "vulnerability",
]
