"""An executable definition of "a valid domain plugin". Each check takes a Domain and returns a list of problems
(empty = pass). The parametrized suite in tests/test_domains.py runs every check over every registered domain, and
tests feed deliberately broken domains to these checks to show that they fail.
"""
from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter

import numpy as np

from grip.answers import Choice, Count, Number, Ordered, Record, answer_from_json
from grip.builder import generate
from grip.domain import OPEN_POSITION, REPHRASE_MAPS, Domain, Question, Reject, scene_from_json, scene_to_json
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas, encode_png, png_chunk_types
from grip.seeding import item_seed, level_for

SLUG = re.compile(r"^[a-z][a-z0-9_]*$")


def seeds_for(dom: Domain, k: int, release: str = "conformance") -> list[tuple[int, int]]:
    """(seed, level) pairs covering every level in turn."""
    return [(item_seed(release, dom.id, i), dom.levels[i % len(dom.levels)]) for i in range(k)]


def _accepted(dom: Domain, k: int):
    for seed, level in seeds_for(dom, k):
        yield seed, level, generate(dom, seed, level)


_SCENES: dict = {}   # (domain record, seed, level) -> accepted scene before drawing, shared by the checks below


def _accepted_scenes(dom: Domain, k: int):
    """Like `_accepted` but not drawn (rgb None) and cached per process: for the checks that look at scenes and
    ladders only. Keyed by the Domain record itself (its functions compare by identity), so two domains never share
    an entry."""
    for seed, level in seeds_for(dom, k):
        key = (dom, seed, level)
        if key not in _SCENES:
            _SCENES[key] = generate(dom, seed, level, render=False)
        yield seed, level, _SCENES[key]


def check_contract(dom: Domain) -> list[str]:
    p = []
    if not dataclasses.is_dataclass(dom.scene) or not dom.scene.__dataclass_params__.frozen:
        p.append("Scene is not a frozen dataclass")
    if not SLUG.match(dom.id):
        p.append(f"domain id {dom.id!r} is not a snake_case slug")
    if not set(dom.levels) <= {1, 2, 3} or not dom.levels:
        p.append(f"levels {dom.levels} not within 1..3")
    for name in ("sample", "ladder", "draw", "edit", "counterfactual"):
        if not callable(getattr(dom, name)):
            p.append(f"{name} is not callable")
    return p


def check_determinism(dom: Domain, k: int = 6) -> list[str]:
    p = []
    for seed, level in seeds_for(dom, k):
        a = _sample_until_ok(dom, seed, level)
        b = _sample_until_ok(dom, seed, level)
        if a != b:
            p.append(f"seed {seed}: two samples from the same seed differ")
    return p


def _sample_until_ok(dom: Domain, seed: int, level: int):
    rng = np.random.default_rng(seed)
    for _ in range(dom.max_attempts):
        try:
            return dom.sample(rng, level)
        except Reject:
            continue
    return None


def check_roundtrip(dom: Domain, k: int = 6) -> list[str]:
    p = []
    for seed, _level, g in _accepted_scenes(dom, k):
        data = json.loads(json.dumps(scene_to_json(g.scene)))
        back = scene_from_json(dom.scene, data)
        if back != g.scene:
            p.append(f"seed {seed}: scene does not survive a JSON round trip")
            continue
        if dom.ladder(back) != g.ladder:
            p.append(f"seed {seed}: the ladder of the round-tripped scene differs (answers not pure?)")
    return p


def check_ladder(dom: Domain, k: int = 9) -> list[str]:
    p = []
    rng = np.random.default_rng(12345)
    for seed, level, g in _accepted_scenes(dom, k):
        lad = g.ladder
        where = f"seed {seed} (level {level})"
        if [q.position for q in lad.rungs] != [1, 2, 3, 4, 5] or lad.open.position != OPEN_POSITION:
            p.append(f"{where}: rung positions are not 1..5 + open")
            continue
        ids = [q.id for q in lad.questions]
        if len(set(ids)) != 6 or not all(SLUG.match(i) for i in ids):
            p.append(f"{where}: question ids not six distinct snake_case slugs: {ids}")
        texts = [q.text.strip() for q in lad.questions]
        if len(set(texts)) != 6:
            p.append(f"{where}: question texts are not distinct")
        if not isinstance(lad.open.answer, Record) or not 1 <= len(lad.open.answer.value) <= 3:
            p.append(f"{where}: open question core is not a Record of 1-3 slots")
        for q in lad.questions:
            a = q.answer
            if not a.in_space():
                p.append(f"{where}: {q.id} answer outside its declared space: {a!r}")
                continue
            if answer_from_json(json.loads(json.dumps(a.to_json()))) != a:
                p.append(f"{where}: {q.id} answer does not survive a JSON round trip")
            ref = a.parse("Reasoning...\nANSWER: " + a.reference_text())
            if not a.matches(ref):
                p.append(f"{where}: {q.id} reference answer {a.reference_text()!r} does not score correct")
            for _ in range(3):
                w = a.plausible_wrong(rng)
                if a.matches(w) or a.matches(a.parse("ANSWER: " + a.format_value(w))):
                    p.append(f"{where}: {q.id} plausible_wrong {w!r} scores correct")
                    break
    return p


def check_margins(dom: Domain, k: int = 9) -> list[str]:
    p = []
    for seed, _level, g in _accepted_scenes(dom, k):
        for q in g.ladder.questions:
            m = q.margin
            if not np.isfinite(m.value) or not np.isfinite(m.threshold) or m.threshold < 0:
                p.append(f"seed {seed}: {q.id} margin not finite/non-negative: {m}")
            if not m.unit:
                p.append(f"seed {seed}: {q.id} margin has no unit")
            if not m.ok:
                p.append(f"seed {seed}: accepted scene has {q.id} margin {m.value} below {m.threshold}")
    return p


def check_counterfactual(dom: Domain, k: int = 9) -> list[str]:
    p = []
    for seed, _level, g in _accepted_scenes(dom, k):
        q4, q5 = g.ladder.rungs[3], g.ladder.rungs[4]
        edited = dom.edit(g.scene)
        if edited == g.scene:
            p.append(f"seed {seed}: the Q5 edit is a no-op")
        if dom.counterfactual(edited) != q5.answer:
            p.append(f"seed {seed}: Q5's answer is not counterfactual(edit(scene))")
        if not q5.edit:
            p.append(f"seed {seed}: Q5 does not describe its edit")
        if q5.text.strip() == q4.text.strip():
            p.append(f"seed {seed}: Q5 asks Q4 again")
    return p


def check_render(dom: Domain, k: int = 6) -> list[str]:
    p = []
    for seed, _level, g in _accepted(dom, k):
        h, w = g.rgb.shape[:2]
        if (h, w) != (dom.size_px, dom.size_px):
            p.append(f"seed {seed}: rendered {w}x{h}, declared {dom.size_px}")
            continue
        if g.rgb.min() == g.rgb.max():
            p.append(f"seed {seed}: blank image")
        b = SAFE_BORDER_PX
        ring = np.concatenate([g.rgb[:b].reshape(-1, 3), g.rgb[-b:].reshape(-1, 3), g.rgb[:, :b].reshape(-1, 3),
                               g.rgb[:, -b:].reshape(-1, 3)])
        if (ring != 255).any():
            p.append(f"seed {seed}: ink inside the {b} px safe border (something is clipped or too close)")
        if set(png_chunk_types(encode_png(g.rgb))) != {"IHDR", "IDAT", "IEND"}:
            p.append(f"seed {seed}: PNG carries chunks other than IHDR/IDAT/IEND")
        c1, c2 = Canvas(dom.size_px, dom.world), Canvas(dom.size_px, dom.world)
        dom.draw(g.scene, c1)
        dom.draw(g.scene, c2)
        if not np.array_equal(c1.array(), c2.array()):
            p.append(f"seed {seed}: drawing the same scene twice gives different pixels")
    return p


def check_no_global_rng(dom: Domain, k: int = 4) -> list[str]:
    """Plain function on purpose: hypothesis reseeds the global generators inside @given and would hide a leak."""
    np_state = np.random.get_state()
    py_state = random.getstate()
    np.random.seed(987654)
    random.seed(987654)
    before = (np.random.get_state()[1].copy(), random.getstate())
    try:
        for _ in _accepted(dom, k):
            pass
        after = (np.random.get_state()[1], random.getstate())
        leaked = not np.array_equal(before[0], after[0]) or before[1] != after[1]
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    return ["sampling, answering or drawing touches the global numpy or stdlib RNG"] if leaked else []


def check_balance(dom: Domain, n: int = 150) -> list[str]:
    """Dataset-level caps on the domain's balance keys under the default level mix: for a choice, majority share
    <= 1/k + 0.10 (+ a sampling allowance for n items); for a count, no value above 35% (+ allowance). Counted over
    accepted scenes before drawing (a draw-time rejection is rare; a build's build.json reports the drawn mix)."""
    p = []
    answers: dict[str, list] = {}
    for i in range(n):
        g = generate(dom, item_seed("balance", dom.id, i), level_for(i, None) if dom.levels == (1, 2, 3)
                     else dom.levels[i % len(dom.levels)], render=False)
        for q in g.ladder.questions:
            if q.id in dom.balance_keys:
                answers.setdefault(q.id, []).append(q.answer)
    slack = 2.5 * np.sqrt(0.25 / n)  # ~2.5 standard errors of a share at n items
    for qid in dom.balance_keys:
        got = answers.get(qid)
        if not got:
            p.append(f"balance key {qid} is not a question id of this domain")
            continue
        shares = Counter(repr(a.key()) for a in got)
        top, hits = shares.most_common(1)[0]
        share = hits / len(got)
        a0 = got[0]
        if qid in dict(dom.balance_caps):
            cap = dict(dom.balance_caps)[qid]
        elif isinstance(a0, Choice):
            k = Counter(len(a.options) for a in got).most_common(1)[0][0]
            cap = 1 / k + 0.10
        else:
            cap = 0.35  # counts (the sheet's cap); lists and records: no single answer dominates
        if share > cap + slack:
            p.append(f"{qid}: answer {top} has share {share:.2f} > cap {cap:.2f} over {len(got)} items")
    return p


def _answers_differ(a, b) -> bool:
    """Q4 of a minimal pair must change: a number by at least 3 tolerances, anything else by its key."""
    if isinstance(a, Number) and isinstance(b, Number):
        return a.difference(b.value) >= 3 * a.tol_abs()
    return a.key() != b.key()


def check_minimal_pair(dom: Domain, k: int = 9) -> list[str]:
    """DOMAINS.md 0.7: s' = minimal_pair(s) passes every margin, changes Q4 (numbers by >= 3 tolerances), keeps Q1
    where the sheet says so, renders, and is deterministic. A domain without one passes (optional field)."""
    if dom.minimal_pair is None:
        return []
    p, made = [], 0
    for seed, _level, g in _accepted_scenes(dom, k):
        where = f"seed {seed}"
        try:
            twin = dom.minimal_pair(g.scene)
        except Reject as r:
            if r.reason != "no_minimal_pair":
                p.append(f"{where}: minimal_pair rejected with {r.reason!r}; only 'no_minimal_pair' is allowed")
            continue
        if dom.minimal_pair(g.scene) != twin:
            p.append(f"{where}: minimal_pair is not deterministic")
            continue
        try:
            lad = dom.ladder(twin)
        except Reject as r:
            p.append(f"{where}: the ladder of the minimal pair rejects ({r.reason}); minimal_pair must raise "
                     f"Reject('no_minimal_pair') instead")
            continue
        made += 1
        bad = lad.failing_margins()
        if bad:
            p.append(f"{where}: the minimal pair fails the margins of {[q.id for q in bad]}")
        if not _answers_differ(g.ladder.rungs[3].answer, lad.rungs[3].answer):
            p.append(f"{where}: the minimal pair does not change Q4 ({g.ladder.rungs[3].answer.reference_text()!r} "
                     f"-> {lad.rungs[3].answer.reference_text()!r})")
        if dom.minimal_pair_keeps_q1 and lad.rungs[0].answer != g.ladder.rungs[0].answer:
            p.append(f"{where}: the minimal pair changes Q1, which the sheet keeps")
        for q in lad.questions:
            if not q.answer.in_space():
                p.append(f"{where}: minimal pair's {q.id} answer outside its declared space")
        try:
            dom.draw(twin, Canvas(dom.size_px, dom.world))
        except Reject as r:
            p.append(f"{where}: the minimal pair does not render ({r.reason}); minimal_pair must reject instead")
    if not made:
        p.append(f"minimal_pair rejected every one of {k} sampled scenes")
    return p


def _rephrase_holds(kind: str, q4, r) -> bool | None:
    """Whether the rephrased answer `r` follows from Q4's answer `q4` by the named map; None when the map needs the
    whole sample (complement: the two add to one fixed total)."""
    if kind == "identity":
        return q4.key() == r.key()
    if kind == "reversal":
        return isinstance(q4, Ordered) and isinstance(r, Ordered) and tuple(r.value) == tuple(reversed(q4.value))
    if kind == "inversion":
        if isinstance(q4, Choice) and isinstance(r, Choice):
            return len(r.options) == 2 and set(q4.options) == set(r.options) and q4.value != r.value
        if isinstance(q4, Number) and isinstance(r, Number):
            return q4.value != 0 and r.difference(1.0 / q4.value) <= r.tol_abs()
        return False
    if kind == "complement":
        if isinstance(q4, Choice) and isinstance(r, Choice):
            return len(r.options) == 2 and set(q4.options) == set(r.options) and q4.value != r.value
        return None
    return False


def check_rephrase(dom: Domain, k: int = 9) -> list[str]:
    """`rephrase_q4` is a second wording of Q4 whose answer follows from Q4's by `rephrase_map`, with its own margin
    at or above threshold and an answer in its declared space. Optional field: a domain without one passes."""
    if dom.rephrase_q4 is None:
        return [] if dom.rephrase_map is None else ["rephrase_map is set but rephrase_q4 is not"]
    if dom.rephrase_map not in REPHRASE_MAPS:
        return [f"rephrase_map {dom.rephrase_map!r} is not one of {list(REPHRASE_MAPS)}"]
    p, totals = [], []
    for seed, _level, g in _accepted_scenes(dom, k):
        where = f"seed {seed}"
        q = dom.rephrase_q4(g.scene)
        q4 = g.ladder.rungs[3]
        if not isinstance(q, Question):
            p.append(f"{where}: rephrase_q4 does not return a Question")
            continue
        if q.text.strip() == q4.text.strip():
            p.append(f"{where}: rephrase_q4 repeats Q4's wording")
        if not q.answer.in_space():
            p.append(f"{where}: the rephrased answer lies outside its declared space")
        if not q.margin.ok:
            p.append(f"{where}: the rephrased question's margin {q.margin.value} is below {q.margin.threshold}")
        held = _rephrase_holds(dom.rephrase_map, q4.answer, q.answer)
        if held is None:
            if isinstance(q4.answer, (Number, Count)) and isinstance(q.answer, (Number, Count)):
                totals.append(float(q4.answer.value) + float(q.answer.value))
            else:
                p.append(f"{where}: complement is defined for two-way choices and numbers only")
        elif not held:
            p.append(f"{where}: rephrased answer {q.answer.reference_text()!r} does not follow from Q4's "
                     f"{q4.answer.reference_text()!r} by {dom.rephrase_map}")
    if totals and max(totals) - min(totals) > 1e-6 * max(1.0, abs(totals[0])):
        p.append(f"complement: Q4 + rephrased answer is not one fixed total ({min(totals)}..{max(totals)})")
    return p


CHECKS = {
    "contract": check_contract, "determinism": check_determinism, "roundtrip": check_roundtrip,
    "ladder": check_ladder, "margins": check_margins, "counterfactual": check_counterfactual,
    "render": check_render, "no_global_rng": check_no_global_rng, "balance": check_balance,
    "minimal_pair": check_minimal_pair, "rephrase": check_rephrase,
}


def check_domain(dom: Domain, only: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    out = {}
    for name, fn in CHECKS.items():
        if only and name not in only:
            continue
        try:
            out[name] = fn(dom)
        except Exception as e:  # a crash is a failed check, reported with its cause
            out[name] = [f"{type(e).__name__}: {e}"]
    return out
