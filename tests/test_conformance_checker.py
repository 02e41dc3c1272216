"""The checker itself: a valid fake domain passes every check; each deliberately broken one fails its check."""
import pytest

import fakes
from grip.conformance import check_domain


def test_valid_fake_passes_everything():
    assert check_domain(fakes.DOMAIN) == {k: [] for k in check_domain(fakes.DOMAIN)}


@pytest.mark.parametrize("name", list(fakes.BROKEN))
def test_broken_fake_fails(name):
    check, dom = fakes.BROKEN[name]
    problems = check_domain(dom, only=(check,))[check]
    assert problems, f"the {check} check did not catch {name}"
