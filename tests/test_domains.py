"""The conformance suite: every check of grip.conformance over every registered domain, one test id each."""
import pytest

from grip import domains
from grip.conformance import CHECKS

IDS = domains.ids()


def test_every_domain_module_is_registered():
    from pathlib import Path
    root = Path(domains.__file__).parent
    modules = {p.stem for p in root.glob("*/*.py") if not p.stem.startswith("_")}
    assert modules <= set(domains.REGISTRY), f"domain modules missing from the registry: {modules - set(IDS)}"
    for d, (family, target) in domains.REGISTRY.items():
        assert family in domains.FAMILIES
        assert target == f"grip.domains.{family}.{d}:DOMAIN"


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("domain_id", IDS)
def test_conformance(domain_id, check):
    dom = domains.get(domain_id)
    assert dom.family == domains.family_of(domain_id)
    problems = CHECKS[check](dom)
    assert problems == [], "\n".join(problems[:10])
