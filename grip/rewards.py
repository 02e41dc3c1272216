"""Verifiable rewards for training on grip items: plain functions of a row and a response text, importable without
the evaluation machinery (no server, no store, no eval imports).

A row is either an item-store row (a line of `items.jsonl`: answers as JSON objects) or a Hub row as
`datasets.load_dataset` returns it (answers as JSON strings, the rephrasing in the `rephrase` column). A question is
named by its position: 1-5 the rungs, 6 the open question, or "rephrase" for the second wording of rung 4.

- `score(row, response, position)`: accuracy, 1.0 when the response's last `ANSWER:` line parses as the question's
  typed answer and the typed comparator accepts it, else 0.0 (exactly grip's offline scorer: "correct" -> 1.0,
  "wrong" and "unparsed" -> 0.0).
- `format_reward(row, response, position)`: 1.0 when the `ANSWER:` line parses as the question's type, right or
  wrong.
- `consistency_reward(row, response_q4, response_rephrase)`: 1.0 when both wordings of rung 4 parse and are judged
  alike (both right or both wrong), else 0.0. It rewards agreement, not truth: pair it with `score`.
- `score_batch(rows, responses, positions)`: `score` over aligned sequences.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from grip import GripError
from grip.answers import Answer, Unparsed, answer_from_json

POSITIONS = (1, 2, 3, 4, 5, 6, "rephrase")


class RewardError(GripError):
    pass


def _loads(v: Any, what: str) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            raise RewardError(f"{what} is not valid JSON") from None
    return v


def question(row: dict, position) -> dict:
    """The question at `position` of `row` (1-6, or "rephrase"), as a dict with the answer decoded."""
    if not isinstance(row, dict) or "questions" not in row:
        raise RewardError("row must be an item row (a line of items.jsonl or a load_dataset row) with questions")
    rid = row.get("id", "?")
    if position == "rephrase":
        q = _loads(row.get("rephrase"), f"item {rid}: rephrase")
        if not isinstance(q, dict):
            raise RewardError(f"item {rid} carries no rephrasing of rung 4 (build it with this grip version)")
    else:
        if isinstance(position, bool) or position not in POSITIONS:
            raise RewardError(f"position must be one of 1-6 or 'rephrase', got {position!r}")
        found = [q for q in row["questions"] if isinstance(q, dict) and q.get("position") == position]
        if len(found) != 1:
            raise RewardError(f"item {rid} has no single question at position {position}")
        q = found[0]
    return dict(q, answer=_loads(q.get("answer"), f"item {rid} question {q.get('id')}: answer"))


def answer_at(row: dict, position) -> Answer:
    q = question(row, position)
    try:
        return answer_from_json(q["answer"])
    except (KeyError, TypeError, ValueError) as e:
        raise RewardError(f"item {row.get('id', '?')} question {q.get('id')}: not a typed answer ({e})") from None


def _parsed(answer: Answer, response: Any):
    if not isinstance(response, str) or not response.strip():
        return Unparsed("empty response")
    try:
        return answer.parse(response)
    except Exception as e:   # a parser bug scores 0, as the offline scorer's "unparsed"
        return Unparsed(f"parser error {type(e).__name__}")


def _correct(answer: Answer, response: Any) -> bool | None:
    """True / False, or None when the response does not parse."""
    p = _parsed(answer, response)
    if isinstance(p, Unparsed):
        return None
    try:
        return bool(answer.matches(p))
    except Exception:
        return None


def score(row: dict, response: str, position) -> float:
    return 1.0 if _correct(answer_at(row, position), response) else 0.0


def format_reward(row: dict, response: str, position) -> float:
    return 0.0 if _correct(answer_at(row, position), response) is None else 1.0


def consistency_reward(row: dict, response_q4: str, response_rephrase: str) -> float:
    a = _correct(answer_at(row, 4), response_q4)
    b = _correct(answer_at(row, "rephrase"), response_rephrase)
    return 1.0 if a is not None and b is not None and a == b else 0.0


def score_batch(rows: Sequence[dict], responses: Sequence[str], positions: Iterable | Any) -> list[float]:
    """`score` for each (row, response, position); `positions` may be one position for all."""
    rows, responses = list(rows), list(responses)
    if len(rows) != len(responses):
        raise RewardError(f"{len(rows)} rows but {len(responses)} responses")
    pos = [positions] * len(rows) if isinstance(positions, (int, str)) else list(positions)
    if len(pos) != len(rows):
        raise RewardError(f"{len(rows)} rows but {len(pos)} positions")
    return [score(r, t, p) for r, t, p in zip(rows, responses, pos)]
