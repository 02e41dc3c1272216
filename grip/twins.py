"""Swap twins: an item's minimal pair (`Domain.minimal_pair`, the smallest scene edit that changes Q4's answer),
drawn at the item's size and stored next to it (`<domain>/twins/<id>.png`, the row's `twin` field).

The twin's answers come from the twin scene, never from pixels. What this module measures of the pixels
(`changed_fraction`, `ssim`) is quality assurance only: how small the visible edit is. `scene_edit` names the scene
fields the pair changed; `TwinStats` sums a store's twins up for build.json.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from grip.domain import Reject
from grip.manifest import StoreError, twin_rel

# Wang, Bovik, Sheikh and Simoncelli (2004): an 11-tap Gaussian window of sigma 1.5 (truncated at 3.5 sigma, so a
# radius of 5 px), K1 = 0.01, K2 = 0.03, dynamic range 255 for 8-bit images.
SSIM_SIGMA = 1.5
SSIM_TRUNCATE = 3.5
SSIM_K1, SSIM_K2, SSIM_RANGE = 0.01, 0.03, 255.0
# ITU-R BT.601 luma, as Pillow's "L" conversion has it.
LUMA = np.array([0.299, 0.587, 0.114])


def greyscale(rgb: np.ndarray) -> np.ndarray:
    """An H x W x 3 uint8 image as luma in 0..255 (float32: SSIM's constants dwarf its rounding, at half the
    cost of float64)."""
    return (np.asarray(rgb, np.float32)[..., :3] @ LUMA.astype(np.float32)).astype(np.float32)


def ssim(a_rgb: np.ndarray, b_rgb: np.ndarray) -> float:
    """Mean structural similarity of two RGB images of one size, computed on their greyscale: local means,
    variances and covariance under the Gaussian window (scipy.ndimage, edges reflected), averaged over the pixels
    whose whole window lies inside the image (as scikit-image crops). 1.0 for identical images."""
    from scipy.ndimage import gaussian_filter
    if a_rgb.shape != b_rgb.shape:
        raise ValueError(f"ssim: images of different shapes {a_rgb.shape} and {b_rgb.shape}")
    x, y = greyscale(a_rgb), greyscale(b_rgb)

    def blur(z: np.ndarray) -> np.ndarray:
        return gaussian_filter(z, SSIM_SIGMA, truncate=SSIM_TRUNCATE, mode="reflect")

    mx, my = blur(x), blur(y)
    vx = blur(x * x) - mx * mx
    vy = blur(y * y) - my * my
    cxy = blur(x * y) - mx * my
    c1, c2 = (SSIM_K1 * SSIM_RANGE) ** 2, (SSIM_K2 * SSIM_RANGE) ** 2
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    pad = int(SSIM_TRUNCATE * SSIM_SIGMA + 0.5)
    inner = s[pad:-pad, pad:-pad] if min(s.shape) > 2 * pad else s
    return float(inner.mean(dtype=np.float64))


def changed_fraction(a_rgb: np.ndarray, b_rgb: np.ndarray) -> float:
    """The fraction of pixels whose RGB differs at all between two images of one size."""
    if a_rgb.shape != b_rgb.shape:
        raise ValueError(f"changed_fraction: images of different shapes {a_rgb.shape} and {b_rgb.shape}")
    return float(np.any(a_rgb[..., :3] != b_rgb[..., :3], axis=-1).mean())


def _same(a, b) -> bool:
    return a == b and (type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                              and not isinstance(a, bool) and not isinstance(b, bool)))


def scene_edit(before: dict, after: dict) -> list[dict]:
    """The scene fields a minimal pair changed, in scene order, as [{"path", "from", "to"}]: paths like
    `gears[2].teeth`, descending into objects and into lists of equal length (a list whose length changed is one
    entry holding both lists)."""
    out: list[dict] = []

    def walk(a, b, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in list(a) + [k for k in b if k not in a]:
                sub = f"{path}.{k}" if path else str(k)
                if k not in a or k not in b:
                    out.append({"path": sub, "from": a.get(k), "to": b.get(k)})
                else:
                    walk(a[k], b[k], sub)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}[{i}]")
        elif not _same(a, b):
            out.append({"path": path, "from": a, "to": b})

    walk(before, after, "")
    return out


def rephrase_json(dom, scene) -> dict | None:
    """The row's `rephrase`: the question JSON of `dom.rephrase_q4(scene)` plus `"map": dom.rephrase_map` (None
    for a domain without a second wording)."""
    if dom.rephrase_q4 is None:
        return None
    return {**dom.rephrase_q4(scene).to_json(), "map": dom.rephrase_map}


def twin_content(dom, scene_json: dict, twin_scene, twin_ladder) -> dict:
    """What a twin's row holds that follows from its scene alone (no pixels): scene, questions, rephrase,
    margin_min and the edit from the item's scene (`scene_json`, as the row stores it)."""
    twin_json = json.loads(json.dumps(dom.scene_to_json(twin_scene)))
    return {"scene": twin_json, "questions": [q.to_json() for q in twin_ladder.questions],
            "rephrase": rephrase_json(dom, twin_scene), "margin_min": twin_ladder.margin_min(),
            "edit": scene_edit(json.loads(json.dumps(scene_json)), twin_json)}


@dataclass
class Twin:
    """The accepted scene's minimal pair (`Domain.minimal_pair`): its scene, ladder and pixels."""
    scene: object
    ladder: object
    rgb: object


def twin_of(dom, scene, seed: int, level: int) -> Twin:
    """The minimal pair of an accepted candidate, its ladder checked like the item's (a twin must be as
    unambiguous as its item). Raises Reject: `no_minimal_pair` as the domain raises it, `twin:<reason>` for a
    rejecting twin ladder, `twin_margin:<question id>` for a twin margin below threshold. Deterministic and free of
    the generator, so a replay of the candidates (`grip.builder._replay`) is unaffected by it."""
    from grip.builder import DomainDefect
    where = f"{dom.id} (item seed {seed}, level {level})"
    try:
        twin = dom.minimal_pair(scene)
    except Reject:
        raise
    except Exception as e:   # a crash inside the domain's own minimal_pair is its bug, said in one line
        raise DomainDefect(f"{where}: minimal_pair failed ({type(e).__name__}: {e}). This is a bug in the domain; "
                           f"the items built so far are kept") from None
    try:
        lad = dom.ladder(twin)
    except Reject as r:
        raise Reject(f"twin:{r.reason}") from None
    except Exception as e:
        raise DomainDefect(f"{where}: the ladder of its minimal pair failed ({type(e).__name__}: {e}). This is a "
                           f"bug in the domain; the items built so far are kept") from None
    bad = lad.failing_margins()
    if bad:
        raise Reject(f"twin_margin:{bad[0].id}")
    for q in lad.questions:
        if not q.answer.in_space():
            raise DomainDefect(f"{where}: the minimal pair's answer of {q.id} lies outside its declared space: "
                               f"{q.answer!r}. This is a bug in the domain; the items built so far are kept")
    return Twin(twin, lad, None)


def check_extras_regenerate(dom, row: dict, scene, fail, first_difference) -> None:
    """The row's `rephrase` and `twin`, where present, against what the regenerated scene gives (the twin's
    pixels, changed_fraction and ssim excepted: its image is checked against its sha256 instead)."""
    if "rephrase" in row:
        try:
            want = rephrase_json(dom, scene)
        except Exception as e:  # the domain's own code on a regenerated scene: any failure is the row's
            fail(f"rephrase failed: {type(e).__name__}: {e}")
        if want is None:
            fail("rephrase, which this domain does not ask")
        d = first_difference(json.loads(json.dumps(want)), row["rephrase"])
        if d:
            fail(f"rephrase: {d}")
    if "twin" not in row:
        return
    if dom.minimal_pair is None:
        fail("twin, which this domain cannot make")
    try:
        twin = twin_of(dom, scene, row["seed"], row["level"])
    except Reject as r:
        fail(f"twin: its scene's minimal pair is rejected ({r.reason})")
    except Exception as e:
        fail(f"twin failed: {type(e).__name__}: {e}")
    want = json.loads(json.dumps(twin_content(dom, row["scene"], twin.scene, twin.ladder)))
    got = row["twin"]
    if got["image"] != twin_rel(row["id"]):
        fail("twin image path")
    for k, v in want.items():
        d = first_difference(v, got[k])
        if d:
            fail(f"twin {k}" + ("" if d == "(value)" else f": {d}"))


def check_twin_file(domain_dir, path, row: dict, twins: bool) -> None:
    """A `--twins` store has a twin in every row and a plain one in none; a twin image must match its sha256."""
    if ("twin" in row) != twins:
        built, asked = ("with", "without") if "twin" in row else ("without", "with")
        raise StoreError(f"{path} was built {built} --twins and this build is {asked}; rerun {built} --twins "
                         f"or choose another --out")
    if twins:
        t = domain_dir / row["twin"]["image"]
        if not t.is_file() or hashlib.sha256(t.read_bytes()).hexdigest() != row["twin"]["sha256"]:
            raise StoreError(f"{t} is missing or differs from its row's twin sha256; the item store is corrupt")


class TwinStats:
    """Twin statistics of one domain's store, fed row by row (`add`); `result()` is None when no row has a twin,
    else {"count", "changed_fraction_mean", "changed_fraction_max", "ssim_mean"} for build.json's "twins"."""

    def __init__(self):
        self.count = 0
        self._cf_sum = 0.0
        self._cf_max = 0.0
        self._ssim_sum = 0.0

    def add(self, row: dict) -> None:
        twin = row.get("twin")
        if not twin:
            return
        self.count += 1
        self._cf_sum += twin["changed_fraction"]
        self._cf_max = max(self._cf_max, twin["changed_fraction"])
        self._ssim_sum += twin["ssim"]

    def result(self) -> dict | None:
        if not self.count:
            return None
        return {"count": self.count, "changed_fraction_mean": round(self._cf_sum / self.count, 6),
                "changed_fraction_max": round(self._cf_max, 6), "ssim_mean": round(self._ssim_sum / self.count, 6)}
