"""Shared by the probe tests (swap, consistency): the domains and size of the `twin_items` store (a fixture of
conftest.py), and a scripted model that knows the truth of every image it is shown (item images and twin images,
by sha256)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from openai_server import image_of, truth_index

from grip.answers import answer_from_json
from grip.eval.prompts import prompt_text

PROBE_DOMAINS = ("clock_reading", "compass_bearings")   # a numeric Q4 and a choice Q4
N = 3


def images_of(req: dict) -> list[bytes]:
    """Every PNG a chat request shows, in message order."""
    out = []
    for m in req["messages"]:
        if isinstance(m.get("content"), list):
            png = image_of({"messages": [m]})
            if png is not None:
                out.append(png)
    return out


def question_of(entry: dict, text: str) -> dict:
    """The question (of a truth-index entry: an item's, its rephrase, or a twin image's) whose prompt is `text`."""
    qs = list(entry["questions"]) + ([entry["rephrase"]] if isinstance(entry.get("rephrase"), dict) else [])
    return next(q for q in qs if prompt_text(q["text"], q["instruction"]) == text)


def right(q: dict) -> str:
    return answer_from_json(q["answer"]).reference_text()


def wrong(q: dict) -> str:
    a = answer_from_json(q["answer"])
    return a.format_value(a.plausible_wrong(np.random.default_rng(7)))


class Truth:
    """sha256 of an image -> its truth-index entry, for scripted models."""

    def __init__(self, root: Path):
        self.index = truth_index([root])

    def entry(self, png: bytes) -> dict:
        return self.index[hashlib.sha256(png).hexdigest()]
