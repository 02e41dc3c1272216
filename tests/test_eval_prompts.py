"""Prompts: the frozen template, the public view of an item, PNG checks."""
import base64
import dataclasses
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai_server import WORKING_DOMAINS
from PIL import Image, PngImagePlugin

from grip import GripError
from grip.eval import prompts
from grip.eval.prompts import (
    ANSWER_LINE,
    TEMPLATE_VERSION,
    BadImage,
    PublicItem,
    build_messages,
    check_png,
    png_chunks,
    public_item,
)
from grip.manifest import load_store, sha256_bytes

SNAPSHOT = Path(__file__).parent / "snapshots" / "prompt_v1.json"
PUBLIC_FIELDS = {"item_id", "domain", "family", "position", "rung", "question_id", "text", "instruction", "template",
                 "image_path", "image_sha256"}
TINY_PNG = b"\x89PNG\r\n\x1a\n" + b"not really pixels"   # build_messages must not look inside the bytes


def _item(text, instruction, position=1):
    return PublicItem("d_000000", "d", "fam", position, "observe", "q_id", text, instruction,
                      Path("/nowhere/d_000000.png"), "0" * 64)


# Hand-written cases covering each shape of instruction a store carries: the ANSWER line already in it (every
# rung), the open question's JUSTIFICATION/CONFIDENCE lead-in, and a bare instruction without the line.
SNAPSHOT_CASES = [
    ("Which hour has the clock's hour hand most recently passed? Give it as a number from 1 to 12.",
     "Answer with a whole number. End with a line `ANSWER: ...`."),
    ("Is the time shown before or after half past the hour?",
     "Answer with one of: before half past, after half past. End with a line `ANSWER: ...`."),
    ("How long until the hands next overlap?",
     ("Explain your reasoning on a line starting `JUSTIFICATION:`, give your confidence from 0 to 100 on a line "
      "starting `CONFIDENCE:`, and end with a line `ANSWER: ...`. Answer in the form `minutes=<minutes>`. For "
      "minutes: answer with a number in minutes, rounded to 1 decimal place; ±1 minutes is accepted.")),
    ("  Which blocks fall?  ", ("Answer with a comma-separated list in alphabetical order, or 'none' if there "
                                "are none.")),
]


def _rendered():
    return [build_messages(_item(t, i), TINY_PNG) for t, i in SNAPSHOT_CASES]


def test_template_is_frozen_by_snapshot():
    """The text a model sees for TEMPLATE_VERSION never changes. To change the wording, add a new version and a
    new snapshot entry (GRIP_WRITE_PROMPT_SNAPSHOT=1 writes the current version's entry)."""
    if os.environ.get("GRIP_WRITE_PROMPT_SNAPSHOT") == "1":
        snap = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}
        snap[TEMPLATE_VERSION] = _rendered()
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(snap, indent=2, ensure_ascii=False) + "\n")
    snap = json.loads(SNAPSHOT.read_text())
    assert TEMPLATE_VERSION in snap, f"no snapshot for template {TEMPLATE_VERSION}"
    assert _rendered() == snap[TEMPLATE_VERSION], (
        f"template {TEMPLATE_VERSION} changed; a released template is frozen: add a new TEMPLATE_VERSION instead")


def test_snapshot_reads_as_intended():
    """Independent of the snapshot file: the wording, by hand."""
    msgs = build_messages(_item("How many?", "Answer with a whole number."), TINY_PNG)
    assert msgs[0]["content"][1]["text"] == "How many?\n\nAnswer with a whole number. End with a line `ANSWER: ...`."
    msgs = build_messages(_item("How many?", "Answer with a whole number. End with a line `ANSWER: ...`."), TINY_PNG)
    assert msgs[0]["content"][1]["text"] == "How many?\n\nAnswer with a whole number. End with a line `ANSWER: ...`."


def test_public_item_has_no_ground_truth_fields():
    names = {f.name for f in dataclasses.fields(PublicItem)}
    assert names == PUBLIC_FIELDS
    assert not names & {"answer", "tol", "tolerance", "margin", "scene", "seed", "level", "value"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        _item("a", "b").text = "c"


def test_public_item_reads_only_public_fields(eval_items):
    """Changing every ground-truth field of a row leaves its public view unchanged."""
    for d in WORKING_DOMAINS:
        for row in load_store(eval_items / d):
            path = eval_items / d / row["image"]
            for q in row["questions"]:
                item = public_item(row, q, path, row["sha256"])
                assert (item.item_id, item.domain, item.family, item.position, item.rung, item.question_id,
                        item.text, item.instruction) == (row["id"], row["domain"], row["family"], q["position"],
                                                         q["rung"], q["id"], q["text"], q["instruction"])
                poisoned_row = {**row, "scene": {"x": "POISON"}, "seed": -1, "level": 99}
                poisoned_q = {**q, "answer": {"type": "count", "value": 999999}, "margin": {"value": -1},
                              "edit": "POISON"}
                assert public_item(poisoned_row, poisoned_q, path, row["sha256"]) == item


def test_public_item_bad_row_is_one_clear_error():
    with pytest.raises(GripError, match="public field"):
        public_item({"id": "x", "domain": "d"}, {"position": 1}, Path("a.png"), "0" * 64)


@given(png=st.binary(max_size=4096), text=st.text(max_size=200), instruction=st.text(max_size=200))
def test_build_messages_shape_and_bytes_unchanged(png, text, instruction):
    msgs = build_messages(_item(text, instruction), png)
    assert len(msgs) == 1 and msgs[0]["role"] == "user" and set(msgs[0]) == {"role", "content"}
    img, txt = msgs[0]["content"]
    url = img["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1], validate=True) == png
    assert txt["type"] == "text"
    assert instruction.strip() in txt["text"]
    assert "ANSWER:" in txt["text"]
    if "ANSWER:" not in instruction:
        assert txt["text"].endswith(ANSWER_LINE) and txt["text"].count(ANSWER_LINE) == 1


def _png(metadata: dict | None = None) -> bytes:
    buf = io.BytesIO()
    info = None
    if metadata:
        info = PngImagePlugin.PngInfo()
        for k, v in metadata.items():
            info.add_text(k, v)
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def test_check_png_accepts_store_images(eval_items):
    for d in WORKING_DOMAINS:
        row = load_store(eval_items / d)[0]
        png = (eval_items / d / row["image"]).read_bytes()
        check_png(png, row["sha256"], "x")
        assert set(png_chunks(png)) <= prompts.PIXEL_CHUNKS


def test_check_png_refuses_metadata_changed_bytes_and_non_png():
    clean = _png()
    check_png(clean, sha256_bytes(clean), "x")
    leaky = _png({"answer": "7"})
    assert "tEXt" in png_chunks(leaky)
    with pytest.raises(BadImage, match="metadata chunks"):
        check_png(leaky, sha256_bytes(leaky), "x")
    with pytest.raises(BadImage, match="do not match"):
        check_png(clean, sha256_bytes(leaky), "x")
    with pytest.raises(BadImage, match="not a PNG"):
        check_png(b"GIF89a", sha256_bytes(b"GIF89a"), "x")
    cut = clean[:-5]
    with pytest.raises(BadImage):
        check_png(cut, sha256_bytes(cut), "x")


@given(st.binary(max_size=300))
def test_png_chunks_never_crashes_on_junk(data):
    try:
        png_chunks(b"\x89PNG\r\n\x1a\n" + data)
    except BadImage:
        pass
