"""Disclosure-risk measures for synthetic data.

pandas DataFrames in, frozen result objects out (each with ``to_dict()`` for MLflow or JSON).
Standalone: imports numpy, pandas, scipy and scikit-learn only, never SDV, Optuna or MLflow.

* :func:`membership_disclosure` - the partition method and its relative F1 "M"
  (El Emam, Mosquera & Fang, JAMIA Open 2022).
* :func:`risk_utility_loss`, :func:`risk_utility_weight` - the same paper's loss.
* :func:`cap`, :func:`cap_per_record` - the CAP family (Elliot 2014; Taub et al. 2018;
  Baillargeon & Charest 2020), DiSCO and TCAP.
* :func:`attribute_inference` - ML attribute inference with before/after and holdout baselines.
* :func:`identification_risk` - identification risk of partially synthetic data
  (Reiter & Mitra 2009).
"""

from risk._result import Interval, Result
from risk._validation import RiskInputError
from risk.cap import CAPResult, CAPSetResult, cap, cap_per_record
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
    MembershipResult,
    membership_disclosure,
    membership_distances,
    naive_f1,
    relative_f1,
)

__all__ = [
    "ACCEPTABLE_M",
    "CONTINUOUS_FLOOR",
    "PUBLISHED_FLOOR",
    "CAPResult",
    "CAPSetResult",
    "IdentificationResult",
    "IdentificationSetResult",
    "InferenceResult",
    "Interval",
    "MembershipResult",
    "Result",
    "RiskInputError",
    "RiskUtilityLoss",
    "attribute_inference",
    "cap",
    "cap_per_record",
    "identification_risk",
    "membership_disclosure",
    "membership_distances",
    "naive_f1",
    "relative_f1",
    "risk_utility_loss",
    "risk_utility_weight",
]
