import os

import pytest
from hypothesis import HealthCheck, settings

# `ci`: derandomized, so a green run stays green; `dev`: random exploration with more examples.
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def eval_items(tmp_path_factory):
    """A small item store (3 items per working domain of tests/openai_server.py, grain copies for all), built once
    per worker and read, never written, by every eval test file. Three items: each domain's levels 1-3 once."""
    from openai_server import WORKING_DOMAINS

    from grip.builder import build
    root = tmp_path_factory.mktemp("eval_items")
    for d in WORKING_DOMAINS:
        build(d, 3, root, grain_subset=3)
    return root


@pytest.fixture(scope="session")
def twin_items(tmp_path_factory):
    """N items of each of PROBE_DOMAINS (tests/probe_items.py), built with `--twins` (so every row has `twin` and
    `rephrase`), once per worker for the probe test files, which only read it."""
    from probe_items import N, PROBE_DOMAINS

    from grip.builder import build
    root = tmp_path_factory.mktemp("probe_items")
    for d in PROBE_DOMAINS:
        build(d, N, root, grain_subset=0, twins=True)
    return root


@pytest.fixture(scope="session", autouse=True)
def _ground_truth_isolation_audit(tmp_path_factory):
    """At the end of the session (per xdist worker): every chat request any test sent to a local test server must
    carry no ground truth (DESIGN.md section 7; tests/openai_server.py `check_isolation`)."""
    yield
    import sys
    server = sys.modules.get("openai_server")
    if server is None:
        return
    problems = server.audit_every_request(tmp_path_factory.getbasetemp())
    assert not problems, "ground-truth isolation failed:\n" + "\n".join(problems[:20])
