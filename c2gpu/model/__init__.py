"""Performance models: pure math on (KernelProfile, MachineParams) -> Prediction.

    from c2gpu.model import predict, MODELS
    predict("resios", profile, machine)     # Resios 2011: delays + warp simulation
    predict("gpuperf", profile, machine)    # GPUPerf 2012: MWP-CWP based

A model is any object with a ``name`` and ``predict(profile, machine) ->
Prediction``; add one to MODELS (or call ``register``) to plug it in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Protocol

from .gpuperf import GPUPerfModel
from .inputs import (GTX460, Branch, Compute, GlobalAccess, GlobalMem, InstClass, KernelProfile,
                     Loop, MachineParams, SharedAccess, SharedMem, TraceNode)
from .prediction import Prediction
from .resios import ResiosModel
from .roofline import check as roofline_check, roofline


class Model(Protocol):
    name: str

    def predict(self, profile: KernelProfile, machine: MachineParams) -> Prediction: ...


MODELS: Dict[str, Model] = {"resios": ResiosModel(), "gpuperf": GPUPerfModel()}


def register(model: Model) -> None:
    MODELS[model.name] = model


def predict(name: str, profile: KernelProfile, machine: MachineParams) -> Prediction:
    """Run model `name`; a note is added when the kernel time falls below the roofline."""
    try:
        model = MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}") from None
    pred = model.predict(profile, machine)
    c = roofline_check(pred, profile, machine)
    if not c.ok:
        pred = replace(pred, notes=pred.notes + (c.message,))
    return pred


__all__ = ["MODELS", "Model", "predict", "register", "Prediction", "MachineParams", "InstClass",
           "KernelProfile", "GlobalAccess", "SharedAccess", "Compute", "GlobalMem", "SharedMem",
           "Loop", "Branch", "TraceNode", "GTX460", "roofline", "roofline_check"]
