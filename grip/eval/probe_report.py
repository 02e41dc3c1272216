"""Report sections and the figure of the probes (grip.eval.probes, grip.eval.probe_stats)."""
from __future__ import annotations

from pathlib import Path

SWAP_FIGURE = "swap_probe.png"

SWAP_HEAD = ["pairs", "base right", "probe right", "Acc_base [95% CI]", "Acc_probe [95% CI]",
             "delta [95% CI]", "first turn right", "repeat rate"]
CONSISTENCY_HEAD = ["pairs", "both right", "consistent", "consistency [95% CI]", "robust accuracy [95% CI]",
                    "Q4 accuracy", "rephrase accuracy"]


def _swap_row(c: dict) -> list:
    from grip.eval.report import _ci, _p
    return [c["pairs"], c["base_correct"], c["probe_correct"], _ci(c["acc_base"]), _ci(c["acc_probe"]),
            _ci(c["delta"], signed=True), _p(c["acc_first"]), _p(c["repeat_rate"])]


def swap_markdown(t: dict) -> list[str]:
    from grip.eval.report import _table
    L = ["## Swap probe", "",
         "base: the twin's Q4 on the twin image alone, in a fresh conversation. Probe: the item's Q4 on the item "
         "image (the E1 rung-4 request), then a new user turn with the twin image asking the twin's Q4 again; "
         "`multi-turn` asks in that turn, `continuation` also pre-fills the model's reply with \"Let me check the "
         "figure again.\" and has it continued. Both are scored against the twin's answer (the minimal pair "
         "changes Q4's answer). Over items with both answers answered: Acc_base, Acc_probe, delta = Acc_probe - "
         "Acc_base paired within item (cluster bootstrap CI, clusters = items). first turn right = accuracy of "
         "the first turn on the item image; repeat rate = probe answers that repeat the first answer's value.", ""]
    L += ["### Per model x variant (domains pooled)", ""]
    L += _table(["model", "variant"] + SWAP_HEAD + ["probe failed", "base failed", "no base"],
                [[c["model"], c["variant"]] + _swap_row(c) + [c["probe_failed"], c["base_failed"],
                                                              c["base_missing"]] for c in t["table"]])
    L += ["### Per model x variant x family", ""]
    L += _table(["model", "variant", "family"] + SWAP_HEAD,
                [[c["model"], c["variant"], c["family"]] + _swap_row(c) for c in t["families_table"]])
    L += ["### Per model x variant x domain", ""]
    L += _table(["model", "variant", "domain"] + SWAP_HEAD,
                [[c["model"], c["variant"], c["domain"]] + _swap_row(c) for c in t["domains_table"]])
    return L


def consistency_markdown(t: dict) -> list[str]:
    from grip.eval.report import _ci, _p, _table
    L = ["## Consistency (equivalent questions)", "",
         "Q4 (the E1 rung-4 request) and its rephrasing (a second wording whose answer follows from Q4's) in two "
         "fresh conversations on the same clean image. Over items with both answered: consistency = share of "
         "pairs both right or both not right (an unparsed answer counts as not right); robust accuracy = share "
         "both right (cluster bootstrap CI, clusters = items).", ""]

    def row(c, scope):
        return [c["model"], c[scope], c["rung"], c["pairs"], c["both_right"], c["consistent"],
                _ci(c["consistency"]), _ci(c["robust_accuracy"]), _p(c["acc_q4"]), _p(c["acc_rephrase"])]

    L += ["### Per model x domain", ""]
    L += _table(["model", "domain", "rung"] + CONSISTENCY_HEAD, [row(c, "domain") for c in t["table"]])
    L += ["### Per model x family", ""]
    L += _table(["model", "family", "rung"] + CONSISTENCY_HEAD, [row(c, "family") for c in t["families_table"]])
    gone = [x for x in t.get("left_out", []) if x["q4_missing"] or x["failed"]]
    if gone:
        L += [f"- {x['model']}: {x['q4_missing']} rephrased answers without a scored Q4 answer (score E1 rows "
              f"with consistency), {x['failed']} pairs with a failed request, left out" for x in gone] + [""]
    return L


def swap_figure(plt, t: dict, path: Path) -> None:
    """Left: Acc_base and Acc_probe (95% CI) per model x variant. Right: delta (95% CI)."""
    cells = t["table"]
    labels = [f"{c['model']} / {c['variant']}" for c in cells]
    fig, axes = plt.subplots(1, 2, figsize=(4.0 + 1.2 * len(cells), 3.8), squeeze=False)
    ax, dx = axes[0]
    xs = list(range(len(cells)))

    def bars(ax, key, offset, width, label):
        ys, lo, hi = [], [], []
        for c in cells:
            e = c[key]
            v = e["value"] if e["value"] is not None else float("nan")
            ys.append(v)
            lo.append(v - e["lo"] if e.get("lo") is not None else 0)
            hi.append(e["hi"] - v if e.get("hi") is not None else 0)
        ax.bar([x + offset for x in xs], ys, width=width, yerr=[lo, hi], capsize=3, label=label)

    bars(ax, "acc_base", -0.2, 0.4, "Acc_base (twin alone)")
    bars(ax, "acc_probe", 0.2, 0.4, "Acc_probe (after the swap)")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy on the twin's Q4 (95% CI)")
    ax.set_xticks(xs, labels, rotation=20, ha="right", fontsize=8)
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3, axis="y")
    bars(dx, "delta", 0.0, 0.6, "delta")
    dx.axhline(0, color="k", lw=0.8)
    dx.set_ylim(-1.05, 1.05)
    dx.set_ylabel("Acc_probe - Acc_base (95% CI)")
    dx.set_xticks(xs, labels, rotation=20, ha="right", fontsize=8)
    dx.grid(alpha=0.3, axis="y")
    fig.suptitle("Swap probe")
    fig.tight_layout()
    from grip.eval.report import _save
    _save(fig, path)
    plt.close(fig)
