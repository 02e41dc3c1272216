import os

import pytest
from hypothesis import HealthCheck, settings

# `ci`: derandomized, so a green run stays green; `dev`: random exploration with more examples.
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
