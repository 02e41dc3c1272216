"""The row schema of the Hub copy (DESIGN.md section 6) and the two views of one item: `hub_row` (item-store row ->
Hub row) and `item_row` (Hub row -> the item-store row exactly as `grip build` wrote it).

Every split of a config shares one schema (a config has one `features`, and `datasets` casts every split to it):

    test        the items (grain_sigma 0, source_id = id)
    core        the rows of `test` with core == True (index < core), so the protocols' subset loads at once
    test_grain  grain copies of the grain subset: id `<item>_s<sigma>`, grain_sigma, source_id = the item
    twins       each item's minimal pair: id = source_id = the item; image, image_sha256, scene, questions,
                rephrase and margin_min are the twin's; edit, changed_fraction and ssim are set on these rows only

Structured values that vary by domain (scene, typed answers, rejections, grain hashes, rephrase, edit) travel as
JSON strings; they are written in the order the builder wrote them, so `item_row` gives back the same bytes.
"""
from __future__ import annotations

import json

from grip.manifest import image_rel, row_in_order, sha256_bytes, twin_rel

SPLIT = "test"
CORE_SPLIT = "core"
GRAIN_SPLIT = "test_grain"
TWIN_SPLIT = "twins"
SPLITS = (SPLIT, CORE_SPLIT, GRAIN_SPLIT, TWIN_SPLIT)   # the order of the card's data_files and the index


def features():
    """The row schema of every config and split (datasets.Features)."""
    from datasets import Features, Image, List, Value
    margin = {"value": Value("float64"), "unit": Value("string"), "threshold": Value("float64"),
              "boundary": Value("string")}
    question = {
        "position": Value("int32"),        # 1..5 the rungs, 6 the open question
        "rung": Value("string"),           # observe relate measure integrate counterfactual open
        "id": Value("string"),
        "text": Value("string"),
        "instruction": Value("string"),    # verbatim format text appended to the prompt
        "answer_type": Value("string"),    # count number choice ordered record
        "answer": Value("string"),         # typed answer as JSON: grip.answers.answer_from_json(json.loads(...))
        "answer_text": Value("string"),    # the reference answer written as a model should write it
        "unit": Value("string"),           # number answers only
        "tolerance": Value("float64"),     # number answers only
        "tolerance_kind": Value("string"),  # "abs" or "rel", number answers only
        "margin": margin,
        "edit": Value("string"),           # the scene edit of the counterfactual rung
    }
    return Features({
        "id": Value("string"),
        "source_id": Value("string"),      # the item a grain copy or twin belongs to (its own id on item rows)
        "grain_sigma": Value("int32"),     # 0 on item and twin rows
        "domain": Value("string"),
        "version": Value("int32"),         # the domain's version that built the item (null: built before versions)
        "family": Value("string"),
        "index": Value("int32"),
        "core": Value("bool"),             # index < core: the core subset the evaluation protocols use
        "level": Value("int32"),
        "seed": Value("uint64"),
        "image": Image(),
        "image_sha256": Value("string"),
        "grain_sha256": Value("string"),   # JSON {sigma: sha256} of the item's grain copies (null: not recorded)
        "width": Value("int32"),
        "height": Value("int32"),
        "scene": Value("string"),          # the latent scene state as JSON (exact round trip)
        "attempts": Value("int32"),        # candidate scenes sampled for the item (null on twin rows)
        "rejections": Value("string"),     # JSON {reason: count} of the rejected candidates (null on twin rows)
        "margin_min": Value("float64"),
        "questions": List(question),
        "rephrase": Value("string"),       # JSON: the second wording of rung 4 with its map (null: none)
        "edit": Value("string"),           # twins: JSON [{path, from, to}] of the scene fields the pair changed
        "changed_fraction": Value("float64"),  # twins: fraction of pixels that differ (QA only, never answers)
        "ssim": Value("float64"),          # twins: mean SSIM of the two greyscale images (QA only)
    })


def _json(v) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _question(q: dict) -> dict:
    from grip.answers import answer_from_json
    a = q["answer"]
    num = a.get("type") == "number"
    return {"position": q["position"], "rung": q["rung"], "id": q["id"], "text": q["text"],
            "instruction": q["instruction"], "answer_type": a["type"], "answer": _json(a),
            "answer_text": answer_from_json(a).reference_text(),
            "unit": a["unit"] if num else None, "tolerance": float(a["tol"]) if num else None,
            "tolerance_kind": a.get("tol_kind", "abs") if num else None,
            "margin": {"value": float(q["margin"]["value"]), "unit": q["margin"]["unit"],
                       "threshold": float(q["margin"]["threshold"]), "boundary": q["margin"].get("boundary", "")},
            "edit": q.get("edit")}


def hub_row(row: dict, png: bytes, core: int, sigma: int = 0) -> dict:
    """One Hub row from one item-store row (and the PNG bytes of the item or of one of its grain copies)."""
    rid = row["id"] if sigma == 0 else f"{row['id']}_s{sigma}"
    return {"id": rid, "source_id": row["id"], "grain_sigma": sigma, "domain": row["domain"],
            "version": row.get("version"), "family": row["family"], "index": row["index"],
            "core": row["index"] < core, "level": row["level"], "seed": row["seed"],
            "image": {"bytes": png, "path": f"{rid}.png"}, "image_sha256": sha256_bytes(png),
            "grain_sha256": _json(row.get("grain_sha256")), "width": row["width"], "height": row["height"],
            "scene": _json(row["scene"]), "attempts": row.get("attempts"),
            "rejections": _json(row.get("rejections")),
            "margin_min": float(row["margin_min"]), "questions": [_question(q) for q in row["questions"]],
            "rephrase": _json(row.get("rephrase")), "edit": None, "changed_fraction": None, "ssim": None}


def twin_hub_row(row: dict, png: bytes, core: int) -> dict:
    """The `twins` row of an item whose row carries a `twin` (and the twin's PNG bytes)."""
    t = row["twin"]
    base = hub_row(row, png, core)
    base.update(image={"bytes": png, "path": f"{row['id']}_twin.png"}, grain_sha256=None, scene=_json(t["scene"]),
                attempts=None, rejections=None, margin_min=float(t["margin_min"]),
                questions=[_question(q) for q in t["questions"]], rephrase=_json(t.get("rephrase")),
                edit=_json(t["edit"]), changed_fraction=float(t["changed_fraction"]), ssim=float(t["ssim"]))
    return base


def _questions(qs: list) -> list[dict]:
    return [{"position": q["position"], "rung": q["rung"], "id": q["id"], "text": q["text"],
             "instruction": q["instruction"], "answer": json.loads(q["answer"]), "margin": dict(q["margin"]),
             "edit": q["edit"]} for q in qs]


def _loads(v):
    return None if v is None else json.loads(v)


def item_row(hub: dict, twin: dict | None = None) -> dict:
    """The inverse view: a row read from the Hub (datasets or parquet) back in item-store shape, its fields in the
    builder's order. On an item row (grain_sigma 0) that is the row `grip build` wrote, byte for byte once written
    with `grip.manifest.row_line`; `twin` (the item's row of the `twins` split) adds the row's `twin`. On a grain
    copy or twin row it is the item's questions and scene view; `image` and `sha256` are left out there, as they
    would name another file."""
    own = hub.get("grain_sigma", 0) == 0 and hub.get("edit") is None
    row = {"id": hub["source_id"], "domain": hub["domain"], "version": hub.get("version"), "family": hub["family"],
           "index": hub["index"], "seed": hub["seed"], "level": hub["level"],
           "image": image_rel(hub["source_id"]) if own else None, "sha256": hub["image_sha256"] if own else None,
           "grain_sha256": _loads(hub.get("grain_sha256")), "width": hub["width"], "height": hub["height"],
           "scene": json.loads(hub["scene"]), "attempts": hub.get("attempts"),
           "rejections": _loads(hub.get("rejections")), "margin_min": hub["margin_min"],
           "questions": _questions(hub["questions"]), "rephrase": _loads(hub.get("rephrase"))}
    if twin is not None:
        row["twin"] = {"image": twin_rel(twin["source_id"]), "sha256": twin["image_sha256"],
                       "scene": json.loads(twin["scene"]), "questions": _questions(twin["questions"]),
                       "rephrase": _loads(twin.get("rephrase")), "margin_min": twin["margin_min"],
                       "edit": json.loads(twin["edit"]), "changed_fraction": twin["changed_fraction"],
                       "ssim": twin["ssim"]}
    return row_in_order({k: v for k, v in row.items() if v is not None or k == "twin"})
