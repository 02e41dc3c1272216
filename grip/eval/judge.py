"""The semantic validator (`grip eval score --judge MODEL --judge-base-url URL`): a second look, by a judge model, at
the responses the rule scorer marked wrong or unparsed, and only at those.

The judge sees the question, its format instruction, the reference answer and the response, never the image, and
answers one question: does the response assert the same proposition as the reference? A YES moves the response
from incorrect to correct in the *validated* score; a NO, an unclear reply or a failed judge call leaves the rule
verdict. A judge can never make a correct response wrong. Judge calls go through the one shared runner and are
stored in the response store under their own experiment name `judge` (condition = the judged row's experiment and
condition), keyed by the judged response's key and the judge prompt, so a rerun asks nothing twice. Scored rows keep
the strict `outcome` and gain `validated_outcome`, `judge_verdict` and `judge_key`; the report shows both."""
from __future__ import annotations

import re

from grip import GripError

JUDGE_EXPERIMENT = "judge"
JUDGE_TEMPLATE_VERSION = "judge-v1"
JUDGE_TEMPLATE = (
    "You check answers to visual questions against a reference answer. You do not see the picture and do not need "
    "it: decide only whether the response below gives the same final answer as the reference.\n\n"
    "Question: {question}\n\n"
    "Answer format the question asked for: {instruction}\n\n"
    "Reference answer: {reference}\n\n"
    "Response to check, between the markers:\n<<<RESPONSE\n{response}\nRESPONSE>>>\n\n"
    "Does the response assert the same proposition as the reference answer (the same value within the stated "
    "tolerance, the same option, the same items, the same fields), even if it is worded or formatted differently? "
    "A response that gives several different final answers, or none, does not. End with one line `VERDICT: YES` "
    "or `VERDICT: NO`.")
VERDICTS = ("yes", "no", "unclear", "failed")
_VERDICT = re.compile(r"^\W*VERDICT\W*:\W*(YES|NO)\b", re.IGNORECASE | re.MULTILINE)


class JudgeError(GripError):
    pass


def judge_text(question: str, instruction: str, reference: str, response: str) -> str:
    return JUDGE_TEMPLATE.format(question=question.strip(), instruction=instruction.strip(),
                                 reference=reference, response=response)


def read_verdict(content: str | None) -> str:
    """yes | no | unclear: the last `VERDICT:` line of a judge reply."""
    if not isinstance(content, str):
        return "unclear"
    found = _VERDICT.findall(content)
    return found[-1].lower() if found else "unclear"


def needs_judge(row: dict) -> bool:
    """A scored row the validator looks at: the request succeeded and the rule scorer found it wrong or
    unparsed."""
    return row["outcome"] in ("wrong", "unparsed") and row.get("status") == "ok"


def judge_jobs(scored: list[dict], stored: dict[str, dict], key) -> dict[str, object]:
    """The judge's text job of each scored row that needs it, by the row's key. `stored`: the response store's rows
    by key (for the response content); `key`: the AnswerKey (question text, instruction, reference). Rows whose
    judge text is the same (same question, reference and response) share one call."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import Job
    jobs = {}
    for r in scored:
        if not needs_judge(r):
            continue
        src = stored.get(r["key"])
        if src is None:
            raise JudgeError(f"scored response {r['key'][:12]} is not in the response store; score and judge the "
                             f"same store")
        item, q, answer = key.answer_for(r)
        pub = public_item(item, q, key.items_dir / r["domain"] / item["image"], item["sha256"])
        text = judge_text(q["text"], q["instruction"], answer.reference_text(), src.get("content") or "")
        jobs[r["key"]] = Job(JUDGE_EXPERIMENT, f"{r['experiment']}:{r['condition']}", pub, text=text,
                             text_template=JUDGE_TEMPLATE_VERSION)
    return jobs


def validate(scored: list[dict], store, endpoint, sampling, items_dir, concurrency: int = 16,
             progress: bool = False):
    """Run the judge over the rows that need it (into `store`, a writable ResponseStore) and return (the scored
    rows with `validated_outcome` and, where judged, `judge_verdict` and `judge_key`; the run summary or None)."""
    from grip.eval.runner import job_key, run_jobs
    from grip.eval.scoring import AnswerKey
    stored = {r["key"]: r for r in store.rows() if r["experiment"] != JUDGE_EXPERIMENT}
    jobs = judge_jobs(scored, stored, AnswerKey(items_dir))
    summary = (run_jobs(list(jobs.values()), endpoint, sampling, store, concurrency=concurrency, progress=progress)
               if jobs else None)
    judged = {r["key"]: r for r in store.rows(experiment=JUDGE_EXPERIMENT)}
    out = []
    for r in scored:
        r = dict(r)
        job = jobs.get(r["key"])
        if job is not None:
            k = job_key(job, endpoint, sampling)
            jr = judged.get(k)
            verdict = "failed" if jr is None or jr["status"] != "ok" else read_verdict(jr.get("content"))
            r["judge_key"], r["judge_verdict"] = k, verdict
            r["judge_model"] = endpoint.model
            r["validated_outcome"] = "correct" if verdict == "yes" else r["outcome"]
        else:
            r["validated_outcome"] = r["outcome"]
        out.append(r)
    return out, summary
