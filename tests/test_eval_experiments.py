"""Experiments: which requests E1 and E2 make, the core subset, the readability gate, and `grip strips`."""
import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from grip.builder import build
from grip.eval import experiments as X
from grip.renderers.canvas import decode_png


REPO = Path(__file__).resolve().parents[1]
SIZES = {"physical_stability": 3, "gear_trains": 3, "clock_reading": 21}  # clock_reading: more than the core 20


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("items")
    for d, n in SIZES.items():
        build(d, n, out)  # grain copies for the first 20 (the default)
    return out


def labels_file(tmp_path, labels: dict, name="r.toml") -> Path:
    lines = ['[judgement]\nwho = "test"\n']
    for d, per in labels.items():
        lines.append(f"[domains.{d}]")
        lines += [f'sigma{s} = "{v}"' for s, v in per.items()]
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


ALL_READABLE = {d: {s: "readable" for s in (0, 15, 25, 40)} for d in SIZES}


def test_e1_is_five_rungs_of_the_core_subset_on_clean_images(store):
    p = X.plan("e1", store)
    assert p.items == {"physical_stability": 3, "gear_trains": 3, "clock_reading": 20}
    assert len(p.requests) == (3 + 3 + 20) * 5
    assert {r.condition for r in p.requests} == {"sigma0"}
    per_item = {}
    for r in p.requests:
        per_item.setdefault(r.item_id, []).append(r.position)
        assert r.image_path == store / r.domain / "images" / f"{r.item_id}.png"
        assert hashlib.sha256(r.image_path.read_bytes()).hexdigest() == r.image_sha256 == r.row["sha256"]
    assert all(sorted(v) == [1, 2, 3, 4, 5] for v in per_item.values())
    assert max(json.loads(json.dumps(r.row))["index"] for r in p.requests) == 19
    full = X.plan("e1", store, subset="all")
    assert len(full.requests) == (3 + 3 + 21) * 5
    only = X.plan("e1", store, domains=["gear_trains"])
    assert {r.domain for r in only.requests} == {"gear_trains"}


def test_e2_uses_the_grain_copies_at_every_sigma(store, tmp_path):
    p = X.plan("e2", store, readability=labels_file(tmp_path, ALL_READABLE))
    assert len(p.requests) == (3 + 3 + 20) * 5 * 4 and not p.excluded
    conds = {r.condition for r in p.requests}
    assert conds == {"sigma0", "sigma15", "sigma25", "sigma40"}
    for r in p.requests:
        if r.condition != "sigma0":
            assert r.image_path == store / r.domain / "grain" / f"s{X.sigma_of(r.condition)}" / f"{r.item_id}.png"
        assert hashlib.sha256(r.image_path.read_bytes()).hexdigest() == r.image_sha256
    # the same questions at every sigma
    by = {}
    for r in p.requests:
        by.setdefault(r.condition, set()).add((r.item_id, r.question_id))
    assert len({frozenset(v) for v in by.values()}) == 1


def test_e2_halts_on_an_unlabelled_condition_and_excludes_unreadable_ones(store, tmp_path):
    partial = {d: dict(v) for d, v in ALL_READABLE.items()}
    del partial["gear_trains"][25]
    with pytest.raises(X.ExperimentError, match="gear_trains x sigma25"):
        X.plan("e2", store, readability=labels_file(tmp_path, partial))
    # only the domains evaluated need labels
    p = X.plan("e2", store, domains=["clock_reading"], readability=labels_file(tmp_path, partial))
    assert {r.domain for r in p.requests} == {"clock_reading"}
    unread = {d: dict(v) for d, v in ALL_READABLE.items()}
    unread["gear_trains"][40] = "unreadable"
    p = X.plan("e2", store, readability=labels_file(tmp_path, unread))
    assert p.excluded == [("gear_trains", 40, "labelled unreadable")]
    assert not any(r.domain == "gear_trains" and r.condition == "sigma40" for r in p.requests)
    assert any(r.domain == "gear_trains" and r.condition == "sigma25" for r in p.requests)
    assert "excluded gear_trains at sigma40" in p.describe()


def test_e2_without_grain_copies_is_an_error(store, tmp_path):
    with pytest.raises(X.ExperimentError, match="no grain copy"):
        X.plan("e2", store, subset="all", readability=labels_file(tmp_path, ALL_READABLE))


@pytest.mark.parametrize("text, match", [
    ('[domains.gear_trains]\nsigma15 = "blurry"\n', "expected \"readable\""),
    ('[domains.gear_trains]\nsigma17 = "readable"\n', "sigma 17"),
    ('[domains.gear_trains]\nsigmaX = "readable"\n', "sigma<number>"),
    ("[domains\n", "not valid TOML"),
])
def test_bad_readability_files(tmp_path, text, match):
    p = tmp_path / "r.toml"
    p.write_text(text)
    with pytest.raises(X.ExperimentError, match=match):
        X.load_readability(p)
    with pytest.raises(X.ExperimentError, match="no readability labels file"):
        X.load_readability(tmp_path / "missing.toml")


def test_bad_plans(store, tmp_path):
    with pytest.raises(X.ExperimentError, match="unknown experiment"):
        X.plan("e9", store)
    with pytest.raises(X.ExperimentError, match="no such item store"):
        X.plan("e1", tmp_path / "nowhere")
    with pytest.raises(X.ExperimentError, match="not a grip item store"):
        X.plan("e1", tmp_path)
    with pytest.raises(X.ExperimentError, match="compass_bearings"):
        X.plan("e1", store, domains=["compass_bearings"])
    with pytest.raises(X.ExperimentError, match="unknown subset"):
        X.plan("e1", store, subset="some")


def test_jobs_carry_only_the_public_view(store):
    p = X.plan("e1", store, domains=["clock_reading"])
    jobs = X.jobs(p)
    assert len(jobs) == len(p.requests)
    secret = {"answer", "margin", "scene", "seed", "level", "edit", "tol"}
    for job, r in zip(jobs, p.requests):
        fields = {f.name for f in dataclasses.fields(job.item)}
        assert not fields & secret
        assert (job.experiment, job.condition, job.item.item_id, job.item.question_id) == (
            "e1", "sigma0", r.item_id, r.question_id)


def test_strip_shows_the_builders_image_and_grain(store):
    png = X.strip_png("clock_reading", 1)
    a = decode_png(png)
    img = decode_png((store / "clock_reading" / "images" / "clock_reading_000001.png").read_bytes())
    h, w, _ = img.shape
    gap = (a.shape[1] - 4 * w) // 3
    assert a.shape[1] == 4 * w + 3 * gap and a.shape[0] > h
    top = a.shape[0] - h
    for k, s in enumerate((0, 15, 25, 40)):
        panel = a[top:, k * (w + gap):k * (w + gap) + w]
        want = img if s == 0 else decode_png(
            (store / "clock_reading" / "grain" / f"s{s}" / "clock_reading_000001.png").read_bytes())
        assert np.array_equal(panel, want), s


def test_the_repository_labels_every_registered_domain():
    """Every registered domain has been looked at, at every sigma, so E2 on a full release never halts."""
    from grip.domains import ids
    r = X.load_readability(REPO / "manifests" / "readability.toml")
    for d in ids():
        assert all(r.label(d, s) is not None for s in (0, 15, 25, 40)), d
    assert {"who", "when", "how"} <= set(r.meta["judgement"])


def test_grain_sha256_is_the_hash_e2_sends(store, tmp_path):
    """What scoring checks a grain response against: the same hash the plan gives the runner."""
    p = X.plan("e2", store, readability=labels_file(tmp_path, ALL_READABLE))
    for r in p.requests[:40]:
        if r.condition != "sigma0":
            assert X.grain_sha256(store / r.domain, r.item_id, X.sigma_of(r.condition)) == r.image_sha256
    assert X.grain_sha256(store / "clock_reading", "clock_reading_000020", 15) is None   # beyond the grain subset
