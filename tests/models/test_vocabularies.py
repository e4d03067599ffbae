"""Every closed vocabulary a model's parameter takes is a registry (kernel.vocabulary): its
names are the parameter's check, the hint's did-you-mean and ``archmodel list``'s listing, and a
name registered later is accepted everywhere at once."""

import pytest

import archmodel.models  # noqa: F401  (fills the catalogue)
from archmodel.kernel import Param, Registry, catalogue
from archmodel.kernel.vocabulary import RegistryCheck
from archmodel.models.memory.policies import SCHEDULERS
from archmodel.models.network.traffic import TRAFFIC_PATTERNS, make_pattern

# Held by other rooms this session, still one_of/choice_problem word lists: the cache's
# replacement policy (models/memory/cache*.py) and the fronthaul network's engine
# (models/fronthaul). Remove an entry when its vocabulary becomes a registry.
NOT_YET: set[tuple[str, str]] = set()


def _vocabulary_params():
    for name, model in catalogue().items():
        for param in model.param_declarations().values():
            if param.choices is not None or (name, param.name) in NOT_YET:
                yield name, param


def _registry_of(param: Param):
    owner = getattr(param.check, "__self__", None)
    if isinstance(owner, Registry):
        return owner
    if isinstance(param.check, RegistryCheck):
        return param.check.registry
    return None


VOCABULARY_PARAMS = sorted((name, p.name) for name, p in _vocabulary_params())


def test_the_catalogue_has_vocabulary_parameters_to_check():
    names = {param for _, param in VOCABULARY_PARAMS}
    assert {"scheduler", "page_policy", "refresh", "queue", "write_drain", "traffic", "injection", "router",
            "stability", "routing", "allocator", "standard", "engine", "cache", "pattern"} <= names


@pytest.mark.parametrize("model, name", VOCABULARY_PARAMS)
def test_every_closed_vocabulary_is_a_registry_and_hints_its_names(model, name):
    param = catalogue()[model].param_declaration(name)
    if (model, name) in NOT_YET:
        assert _registry_of(param) is None, f"{model}.{name} is a registry now: drop it from NOT_YET"
        return
    assert _registry_of(param) is not None, f"{model}.{name}'s check is a word list, not a registry"
    for choice in param.choices:
        assert param.problem(choice) is None
        problem = param.problem(choice + choice[-1])  # a letter typed twice
        assert problem is not None and problem.startswith("must be one of ")
        assert problem.hint == f"did you mean '{choice}'?"


def test_a_name_registered_later_is_accepted_by_the_check_and_listed():
    param = catalogue()["DramController"].param_declaration("scheduler")
    assert param.problem("lifo") is not None
    SCHEDULERS.add("lifo", "a test scheduler")
    try:
        assert param.problem("lifo") is None
        assert param.choices[-1] == "lifo"
    finally:
        SCHEDULERS.remove("lifo")
    assert param.problem("lifo") is not None


def test_a_registered_traffic_pattern_is_built_by_name_and_none_stays_admitted():
    param = catalogue()["Noc"].param_declaration("traffic")
    assert param.choices[0] == "none" and param.problem("none") is None
    TRAFFIC_PATTERNS.add("self", lambda n, dims, hotspots, fraction: (lambda src, rng: src))
    try:
        assert param.problem("self") is None and "self" in param.choices
        assert make_pattern("self", 16)(5, None) == 5
    finally:
        TRAFFIC_PATTERNS.remove("self")
    assert param.choices.count("none") == 1


def test_a_hint_without_a_close_name_lists_the_names_under_their_plural():
    assert Registry("page policy", {"open": "", "closed": ""}).hint("zzz") == "page policies: open, closed"
    assert Registry("injection process", {"onoff": ""}).hint("zzz") == "injection processes: onoff"
    assert Registry("routing", {"dor": ""}).hint("zzz") == "routings: dor"
