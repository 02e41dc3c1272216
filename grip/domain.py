"""The plugin contract: Margin, Question, Ladder, Domain, and the rejection signal a domain raises."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from grip.answers import Answer, answer_from_json

RUNG_NAMES = {1: "observe", 2: "relate", 3: "measure", 4: "integrate", 5: "counterfactual", 6: "open"}
OPEN_POSITION = 6
# How a rephrased Q4's answer follows from Q4's: the same answer; the other side of a two-way relation (yes <-> no,
# the other of two options, a reciprocal ratio); the list reversed; or the complement to a fixed total.
REPHRASE_MAPS = ("identity", "inversion", "reversal", "complement")


class Reject(Exception):
    """Raised by a domain's sampler, ladder or renderer to reject a candidate scene; `reason` is a short slug
    (e.g. "label_clash", "jammed") counted per item and per build."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Margin:
    """Distance from the scene to the nearest boundary that would change this answer or make it unreadable.
    A scene is accepted only if `value >= threshold`."""
    value: float
    unit: str
    threshold: float
    boundary: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.value >= self.threshold)

    def to_json(self) -> dict:
        return {"value": float(self.value), "unit": self.unit, "threshold": float(self.threshold),
                "boundary": self.boundary}


@dataclass(frozen=True)
class Question:
    """One question of a ladder. `position` 1..5 for the rungs, 6 for the open question. `edit` describes the
    scene edit of a counterfactual rung (None elsewhere)."""
    position: int
    id: str
    text: str
    answer: Answer
    margin: Margin
    edit: str | None = None

    @property
    def is_open(self) -> bool:
        return self.position == OPEN_POSITION

    def instruction(self) -> str:
        """The verbatim format text a prompt appends after the question."""
        core = self.answer.instruction()
        if self.is_open:
            return ("Explain your reasoning on a line starting `JUSTIFICATION:`, give your confidence from 0 to 100 "
                    "on a line starting `CONFIDENCE:`, and end with a line `ANSWER: ...`. " + core)
        return core + " End with a line `ANSWER: ...`."

    def to_json(self) -> dict:
        return {"position": self.position, "rung": RUNG_NAMES[self.position], "id": self.id, "text": self.text,
                "instruction": self.instruction(), "answer": self.answer.to_json(), "margin": self.margin.to_json(),
                "edit": self.edit}

    @staticmethod
    def from_json(d: dict) -> "Question":
        m = d["margin"]
        return Question(d["position"], d["id"], d["text"], answer_from_json(d["answer"]),
                        Margin(m["value"], m["unit"], m["threshold"], m.get("boundary", "")), d.get("edit"))


@dataclass(frozen=True)
class Ladder:
    rungs: tuple[Question, Question, Question, Question, Question]
    open: Question

    @property
    def questions(self) -> tuple[Question, ...]:
        return (*self.rungs, self.open)

    def failing_margins(self) -> list[Question]:
        return [q for q in self.questions if not q.margin.ok]

    def margin_min(self) -> float:
        """min over questions of value/threshold (inf when every threshold is 0)."""
        ratios = [q.margin.value / q.margin.threshold for q in self.questions if q.margin.threshold > 0]
        return float(min(ratios)) if ratios else float("inf")


def scene_to_json(scene: Any) -> dict:
    if not hasattr(type(scene), "__dataclass_fields__"):
        return json.loads(json.dumps(dataclasses.asdict(scene)))   # which raises asdict's TypeError
    return json.loads(json.dumps(_plain(scene)))


_LEAVES = frozenset((int, float, str, bool, type(None)))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(obj: Any) -> Any:
    """What `dataclasses.asdict` makes of a value, up to what JSON keeps of it (several times faster): dataclasses
    as dicts of their fields, lists, tuples and named tuples as lists, dicts as dicts, anything else as it is
    (asdict deep-copies it, which JSON cannot tell)."""
    cls = type(obj)
    if cls in _LEAVES:
        return obj
    names = _FIELD_NAMES.get(cls)
    if names is None and hasattr(cls, "__dataclass_fields__"):
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    if names is not None:
        return {k: _plain(getattr(obj, k)) for k in names}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def _retuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_retuple(v) for v in value)
    return value


def scene_from_json(scene_cls: type, data: dict) -> Any:
    """Inverse of `scene_to_json` for frozen dataclasses of plain values (lists come back as tuples)."""
    names = {f.name for f in dataclasses.fields(scene_cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"{scene_cls.__module__}.Scene: unknown fields {sorted(unknown)}")
    return scene_cls(**{k: _retuple(v) for k, v in data.items()})


@dataclass(frozen=True)
class Domain:
    """The record a domain module registers as `DOMAIN`.

    `edit(scene)` is the counterfactual operator E of rung 5 and `counterfactual(scene)` the answer function that
    rung 5 applies to E(scene): the conformance suite checks `ladder(s).rungs[4].answer == counterfactual(edit(s))`.
    `world` is the rectangle (x0, y0, x1, y1) the domain draws in, mapped onto the `size_px` square canvas.

    `minimal_pair(scene)` (optional until every domain has one) is the smallest deterministic edit that changes Q4's
    answer while every margin still holds; it may raise `Reject("no_minimal_pair")`. `minimal_pair_keeps_q1` says
    whether the sheet asks Q1 to stay the same under it. `rephrase_q4(scene)` (optional) is a second wording of rung
    4 with its own answer and margin; `rephrase_map` names how that answer follows from Q4's (one of
    `REPHRASE_MAPS`).
    """
    id: str
    family: str
    title: str
    scene: type
    sample: Callable[[np.random.Generator, int], Any]
    ladder: Callable[[Any], Ladder]
    draw: Callable[[Any, Any], None]
    edit: Callable[[Any], Any]
    counterfactual: Callable[[Any], Answer]
    description: str = ""
    levels: tuple[int, ...] = (1, 2, 3)
    size_px: int = 768
    world: tuple[float, float, float, float] = (0.0, 0.0, 768.0, 768.0)
    max_attempts: int = 2000
    balance_keys: tuple[str, ...] = field(default_factory=tuple)
    # Caps the sheet sets itself where they differ from the default (1/k + 0.10 for choices, 0.35 otherwise),
    # e.g. physical_stability's "stable 40%": (question id, largest share of one answer).
    balance_caps: tuple[tuple[str, float], ...] = field(default_factory=tuple)
    # Bumped whenever a change alters the domain's items (scenes, texts, answers, margins or pixels): rows record it,
    # and resume and export refuse to mix items of two versions.
    version: int = 1
    minimal_pair: Callable[[Any], Any] | None = None
    minimal_pair_keeps_q1: bool = True
    rephrase_q4: Callable[[Any], Question] | None = None
    rephrase_map: str | None = None

    def scene_to_json(self, scene: Any) -> dict:
        return scene_to_json(scene)

    def scene_from_json(self, data: dict) -> Any:
        return scene_from_json(self.scene, data)
