"""Prompts: one image and one question per fresh conversation, built only from a public view of an item.

`PublicItem` is the only thing the runner ever sees of an item: no answer, tolerance field, margin, scene, seed or
level. (The question's `instruction` is public: it is the format text a person would be shown, and it may name the
choice options or the accepted tolerance in words.) Templates are versioned; the text of a version never changes
once released (a snapshot test freezes it). A new wording is a new `TEMPLATE_VERSION`.
"""
from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from pathlib import Path

from grip import GripError

__all__ = [
    "ANSWER_LINE",
    "TEMPLATE_VERSION",
    "BadImage",
    "PublicItem",
    "build_messages",
    "check_png",
    "png_chunks",
    "png_data_url",
    "prompt_text",
    "public_item",
]

TEMPLATE_VERSION = "v1"

# The closing line every prompt must ask for. Item stores carry it at the end of each question's instruction
# already; the template adds it only when an instruction lacks it, so a prompt never asks twice.
ANSWER_LINE = "End with a line `ANSWER: ...`."

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Chunks that hold pixels and nothing else. Anything else (tEXt, iTXt, zTXt, eXIf, tIME, pHYs, gAMA...) is
# metadata a model could read, and is refused rather than stripped: bytes go out unchanged or not at all.
PIXEL_CHUNKS = frozenset({"IHDR", "PLTE", "tRNS", "IDAT", "IEND"})


class BadImage(GripError):
    """An image that cannot be sent as is: not a PNG, changed since the build, or carrying metadata chunks."""


@dataclass(frozen=True)
class PublicItem:
    item_id: str
    domain: str
    family: str
    position: int          # 1..5 rungs, 6 the open question
    rung: str
    question_id: str
    text: str
    instruction: str       # the answer type's format instruction, verbatim from the item store
    image_path: Path
    image_sha256: str      # of the exact bytes at image_path (a grain copy has its own)


def public_item(row: dict, question: dict, image_path: Path, image_sha256: str) -> PublicItem:
    """The public view of one question of one items.jsonl row. Reads only public fields, by name."""
    try:
        return PublicItem(item_id=str(row["id"]), domain=str(row["domain"]), family=str(row["family"]),
                          position=int(question["position"]), rung=str(question["rung"]),
                          question_id=str(question["id"]), text=str(question["text"]),
                          instruction=str(question["instruction"]), image_path=Path(image_path),
                          image_sha256=str(image_sha256))
    except (KeyError, TypeError, ValueError) as e:
        raise GripError(f"item {row.get('id', '?') if isinstance(row, dict) else '?'}: question lacks a public "
                        f"field ({e}); not a grip item store row") from None


def prompt_text(text: str, instruction: str) -> str:
    """Template v1: the question, a blank line, the instruction verbatim, and the ANSWER line if it is missing."""
    instruction = instruction.strip()
    if "ANSWER:" not in instruction:
        instruction = f"{instruction} {ANSWER_LINE}".strip()
    return f"{text.strip()}\n\n{instruction}"


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def build_messages(item: PublicItem, png: bytes) -> list[dict]:
    """One fresh user turn: the image (PNG bytes unchanged, as a data URL), then the question and instruction."""
    return [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": png_data_url(png)}},
        {"type": "text", "text": prompt_text(item.text, item.instruction)},
    ]}]


def png_chunks(png: bytes) -> list[str]:
    """Chunk types of a PNG in file order. Raises BadImage on anything that is not a well-formed PNG."""
    if not png.startswith(_PNG_SIGNATURE):
        raise BadImage("not a PNG file")
    out, i = [], len(_PNG_SIGNATURE)
    while i < len(png):
        if i + 8 > len(png):
            raise BadImage("PNG ends inside a chunk header")
        (n,) = struct.unpack(">I", png[i:i + 4])
        kind = png[i + 4:i + 8].decode("latin-1")
        if i + 12 + n > len(png):
            raise BadImage(f"PNG chunk {kind!r} is cut short")
        out.append(kind)
        i += 12 + n
    if not out or out[0] != "IHDR" or out[-1] != "IEND":
        raise BadImage("PNG does not start with IHDR and end with IEND")
    return out


def check_png(png: bytes, sha256: str, where: str) -> None:
    """Refuse an image whose bytes differ from the store's hash or that carries any non-pixel chunk."""
    import hashlib
    got = hashlib.sha256(png).hexdigest()
    if got != sha256:
        raise BadImage(f"{where}: image bytes do not match the sha256 the item store recorded "
                       f"({got[:12]} != {sha256[:12]}); rebuild the store")
    try:
        extra = sorted(set(png_chunks(png)) - PIXEL_CHUNKS)
    except BadImage as e:
        raise BadImage(f"{where}: {e}") from None
    if extra:
        raise BadImage(f"{where}: PNG carries metadata chunks {extra}; refusing to send it to a model")
