"""Behavioural component models, one subpackage per family (basic, compute, fronthaul,
memory, network, training, ...; the README's "Model families" describes each), the message
types they share (:mod:`archmodel.models.messages`) and the registry of topology generators the network
and fronthaul families register (:mod:`archmodel.models.topologies`).

Importing this package imports every family it finds, so every model is in the catalogue
that ``archmodel list`` prints and the language resolves names against.
"""

import importlib
import pkgutil

# Each family is a subpackage; finding them here means a new family needs no edit to this file.
for _family in pkgutil.iter_modules(__path__):
    if _family.ispkg:
        importlib.import_module(f"{__name__}.{_family.name}")
