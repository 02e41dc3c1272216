"""The dataset card of a Hub export (README.md), generated from code: the YAML header (configs, dataset_info from
the schema and the shard index) and a body worded from the registry, the index and the build provenance."""
from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from grip.hub_rows import CORE_SPLIT, GRAIN_SPLIT, TWIN_SPLIT, features

DIST = "grip-bench"   # the distribution name in pyproject.toml

SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))


def wheel_name(version: str) -> str:
    return f"{DIST.replace('-', '_')}-{version}-py3-none-any.whl"


def _pip_url(remote: str) -> str | None:
    """A git remote as pip's `git+` URL, credentials dropped (they must never reach a card); None for a local
    path or a scheme pip cannot fetch from."""
    scp = re.fullmatch(r"([\w.-]+)@([\w.-]+):(?!//)(.+)", remote)
    if scp:
        return f"git+ssh://{scp[1]}@{scp[2]}/{scp[3].lstrip('/')}"
    u = urlsplit(remote)
    if u.scheme not in ("https", "http", "ssh", "git") or not u.hostname:
        return None
    user = "git@" if u.scheme == "ssh" and u.username == "git" else ""
    host = u.hostname + (f":{u.port}" if u.port else "")
    return "git+" + urlunsplit((u.scheme, user + host, u.path, "", ""))


def install_spec(prov: dict) -> dict:
    """The install line of the card, as true as the facts allow: `pip install "git+<remote>@<commit>"` when the
    export ran from a git checkout with a fetchable remote, else the wheel of this grip (`pip wheel --no-deps .` in
    the checkout). `note` says which, and when the checkout had uncommitted changes."""
    commit, remote, ver = prov.get("git_commit"), prov.get("git_remote"), prov.get("grip", "")
    url = _pip_url(remote) if remote else None
    dirty = (" The checkout had uncommitted changes when this was exported, so that commit may differ from the "
             "grip that made it.") if prov.get("git_dirty") else ""
    if url and commit:
        return {"method": "git", "line": f'pip install "{url}@{commit}"',
                "note": f"grip {ver} at commit {commit} of {url[4:]}.{dirty}"}
    wheel = wheel_name(ver)
    if commit:
        return {"method": "wheel", "line": f"pip install {wheel}",
                "note": f"The wheel of grip {ver}, built in grip's source checkout at commit {commit} with "
                        f"`pip wheel --no-deps .` (the checkout has no public remote).{dirty}"}
    return {"method": "wheel", "line": f"pip install {wheel}",
            "note": f"The wheel of grip {ver} this export was made with (built from grip's source with "
                    f"`pip wheel --no-deps .`)."}


# --- the dataset card ----------------------------------------------------------------------------------------

ANSWER_TYPES = {
    "count": ("Count", "a whole number", "exact"),
    "number": ("Number", "a number in the stated unit, rounded as stated",
               "abs(x - v) <= tolerance (`tolerance_kind` abs, or rel = a fraction of v); circular for angles"),
    "choice": ("Choice", "one of the listed options", "normalised text (case, whitespace, a small reviewed synonym "
               "table per question)"),
    "ordered": ("Ordered", "a comma-separated list", "element-wise in order (or as a set when the order is "
                "canonical)"),
    "record": ("Record", "`name=value; name=value`", "field by field, each with its own type; a missing field is "
               "wrong"),
}


def size_category(n: int) -> str:
    for bound, label in SIZE_CATEGORIES:
        if n < bound:
            return label
    return "n>1T" if n > 10**12 else "100M<n<1B"


def card_yaml(index: dict) -> dict:
    """The YAML header: configs (one per domain, the first default), dataset_info generated from the schema and
    the shard index, task category, license, size category."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData
    doms = index["domains"]
    configs = []
    for k, (d, info) in enumerate(doms.items()):
        c = {"config_name": d, "data_files": [{"split": s, "path": f"{d}/{s}-*"} for s in info["splits"]]}
        if k == 0:
            c["default"] = True
        configs.append(c)
    infos = DatasetInfosDict()
    for d, info in doms.items():
        splits = SplitDict()
        for s, si in info["splits"].items():
            splits.add(SplitInfo(name=s, num_bytes=si["num_bytes"], num_examples=si["rows"]))
        infos[d] = DatasetInfo(features=features(), splits=splits,
                               download_size=sum(si["download_size"] for si in info["splits"].values()),
                               dataset_size=sum(si["num_bytes"] for si in info["splits"].values()))
    card = DatasetCardData()
    infos.to_dataset_card_data(card)
    dataset_info = card["dataset_info"]
    if isinstance(dataset_info, dict):  # datasets writes a bare mapping for one config; keep one shape
        dataset_info = [{"config_name": next(iter(doms)), **dataset_info}]
    total = sum(si["rows"] for info in doms.values() for si in info["splits"].values())
    return {
        "pretty_name": index["name"],
        "license": index["license"],
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "size_categories": [size_category(total)],
        "tags": ["visual-reasoning", "synthetic", "procedural", "benchmark"],
        "configs": configs,
        "dataset_info": dataset_info,
    }


def core_text(index: dict) -> str:
    """The card's sentence on the core subset and the grain subset, worded from the per-domain facts."""
    doms = index["domains"]
    text = f"The core subset is the items with `core == True` (index < {index['core']}): the items the evaluation " \
           "protocols use."
    whole = [d for d, info in doms.items() if info["items"] <= index["core"]]
    if whole:
        text += f" Every item of {', '.join(f'`{d}`' for d in whole)} is core (fewer items than {index['core']})."
    grain = {d: info["grain_items"] for d, info in doms.items()}
    if all(grain[d] == info["core"] for d, info in doms.items()):
        return text + f" The core items are exactly the items with grain copies (split `{GRAIN_SPLIT}`)."
    parts = [f"`{d}` the first {k}" + (" (the core items)" if k == doms[d]["core"] else
                                       " (fewer than the core items)" if k < doms[d]["core"] else
                                       " (more than the core items)") for d, k in grain.items()]
    return text + f" Grain copies (split `{GRAIN_SPLIT}`) exist for: {'; '.join(parts)}."


def splits_text(doms: dict) -> list[str]:
    """The card's lines on the splits beyond `test` and `test_grain` (those the export has) and on `rephrase`."""
    names = {s for info in doms.values() for s in info["splits"]}
    out = []
    if CORE_SPLIT in names:
        out.append(f"Split `{CORE_SPLIT}` holds the core rows of `test` again: "
                   f'`load_dataset("<org>/<name>", "<domain>", split="{CORE_SPLIT}", streaming=True)` or '
                   f'`load_dataset("<org>/<name>", data_files={{"{CORE_SPLIT}": "<domain>/{CORE_SPLIT}-*"}})` '
                   f"reads only them.")
    if TWIN_SPLIT in names:
        out.append(f"Split `{TWIN_SPLIT}` holds each item's minimal pair (`source_id` = the item): the smallest scene "
                   "edit that changes the rung-4 answer, drawn like the item, with its own scene, questions, "
                   "`rephrase` and margins; `edit` lists the changed scene fields; `changed_fraction` and `ssim` "
                   "measure the pixels for quality assurance only (answers come from the scene).")
    out.append("`rephrase` (JSON, where the domain has one) is a second wording of rung 4 whose answer follows "
               "from rung 4's by its `map` (identity, inversion, reversal or complement).")
    return [" ".join(out)]


def dataset_card(index: dict, stores: list | None = None) -> str:
    import yaml
    from grip.domain import RUNG_NAMES
    from grip.domains import FAMILIES, REGISTRY, family_of, ids
    head = yaml.safe_dump(card_yaml(index), sort_keys=False, allow_unicode=True, width=120)
    doms = index["domains"]
    first = next(iter(doms))
    titles = {}
    for d in doms:
        try:
            from grip.domains import get
            titles[d] = get(d).title
        except Exception:  # a title is decoration; the card must not depend on every module importing
            titles[d] = ""
    install = index["export"].get("install") or install_spec(index["export"])
    L = [f"# {index['name']}", "",
         "Procedural visual-reasoning scenes with exact ground truth. Every image carries a five-rung question "
         "ladder and an open question; every answer is computed in closed form from the scene's latent state "
         "(stored with the item), with the margin to the nearest decision boundary recorded. Generated by "
         f"grip {index['export']['grip']}.", "",
         "## Load one domain", "", "```python", "from datasets import load_dataset",
         f'ds = load_dataset("<org>/<name>", "{first}")          # splits: '
         + ", ".join(doms[first]["splits"]),
         'row = ds["test"][0]',
         'row["image"]                      # PIL image (PNG bytes as generated, no metadata)',
         'q = row["questions"][2]           # rung 3',
         'q["text"], q["instruction"], q["answer_text"]',
         "", "# exact scoring with grip's typed answers (see Install grip below)",
         "import json; from grip.answers import answer_from_json",
         'a = answer_from_json(json.loads(q["answer"]))',
         'a.matches(a.parse(model_response))   # reads the last `ANSWER:` line', "```", "",
         core_text(index), "", *splits_text(doms), "",
         "## Install grip", "", "```bash", install["line"], "```", "", install["note"], "",
         "Evaluate a model on this copy with `grip eval run --experiment e1 --items <org>/<name> --model ...` "
         "(downloaded once, every shard's sha256 checked, cached as a local item store).", "",
         "## Families and domains", "",
         "Every registered domain, by family; the ones in this release are configs of this dataset.", "",
         "| family | domain | title | version | items | grain copies |", "|---|---|---|---|---|---|"]
    for fam in FAMILIES:
        members = [d for d in ids() if (REGISTRY[d][0] if d in REGISTRY else family_of(d)) == fam]
        for d in members:
            if d in doms:
                info = doms[d]
                L.append(f"| {fam} | `{d}` | {titles.get(d, '')} | {info.get('version', 1)} | {info['items']} | "
                         f"{info['grain_items']} x sigma {'/'.join(map(str, info['grain_sigmas']))} |")
            else:
                L.append(f"| {fam} | {d} | (not in this release) | | 0 | 0 |")
    L += ["", "## The ladder", "",
          "Each image has six questions, in `questions` by `position`: five rungs of increasing depth and one open "
          "question. A question's `text` holds no answer; `instruction` is the verbatim format text to append.",
          "", "| position | rung | " + " | ".join(f"`{d}`" for d in doms) + " |",
          "|---|---|" + "---|" * len(doms)]
    for p, rung in RUNG_NAMES.items():
        L.append(f"| {p} | {rung} | " + " | ".join(", ".join(doms[d]["question_ids"].get(str(p), []))
                                                   for d in doms) + " |")
    L += ["", "Rung 5 is counterfactual: its `edit` describes a change to the scene, and its answer is computed on "
          "the edited scene. The open question is a record of checkable slots plus free `JUSTIFICATION:` and "
          "`CONFIDENCE:` lines that are not scored.", "",
          "## Answer types", "",
          "`answer_type` names the type and `answer` holds it as JSON (value, tolerance, unit, options...). A "
          "model ends its response with a line `ANSWER: ...`; an unreadable answer is its own outcome, never "
          "counted as wrong or right.", "", "| type | written as | compared |", "|---|---|---|"]
    used = sorted({t for info in doms.values() for t in info["answer_types"]})
    for t in used:
        name, written, cmp = ANSWER_TYPES.get(t, (t, "", ""))
        L.append(f"| `{t}` ({name}) | {written} | {cmp} |")
    L += ["", "## Margins", "",
          "`margin` is the distance from the scene to the nearest boundary that would change the answer or make it "
          "unreadable (degrees to a rounding tie, pixels between two counted objects, relative gap between two "
          "values...), with its `unit`, the `threshold` the generator demanded and a description of the "
          "`boundary`. A scene was kept only if every question's margin was at least its threshold; "
          "`margin_min` is the smallest value/threshold ratio over the six questions.", "",
          "## Grain levels", "",
          f"Split `{GRAIN_SPLIT}` holds copies of the grain subset with deterministic monochrome Gaussian grain "
          "(one N(0,1) field per image, seeded by its file name, scaled by `grain_sigma` and added to all three "
          "channels). `source_id` names the item in `test` (where `grain_sigma` is 0); the same field is used at "
          "every sigma, so levels are paired within an image. Questions and answers are the item's.", "",
          "## Reproducing this release", "",
          "Item *i* of a domain is a pure function of (seed, domain, i): the same bytes on every rebuild.", "",
          "| domain | seed | level | items | grip | git commit | cairo | pycairo | numpy | pillow | shapely |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for d, info in doms.items():
        b, pv = info["build"], info["provenance"]
        L.append(f"| `{d}` | {b.get('seed')} | {b.get('level') or '1-3 in turn'} | {info['items']} | "
                 f"{pv.get('grip', '')} | {pv.get('git_commit', '')}{' (dirty)' if pv.get('git_dirty') else ''} | "
                 f"{pv.get('cairo', '')} | {pv.get('pycairo', '')} | {pv.get('numpy', '')} | "
                 f"{pv.get('pillow', '')} | {pv.get('shapely', '')} |")
    ex = index["export"]
    L += ["", f"Exported with grip {ex['grip']}, datasets {ex['datasets']}, huggingface_hub "
          f"{ex['huggingface_hub']}, pyarrow {ex['pyarrow']}."]
    if index.get("release"):
        rel = index["release"]
        name = rel.get("manifest", "")
        L += ["", f"Release recipe: `{name}` (sha256 `{rel.get('manifest_sha256', '')}`; the official recipes are in "
              f"grip's `manifests/` folder); rebuild with `grip build --manifest {name} --out DIR`."]
    L += ["", "`grip-export.json` lists every shard with its row count, size and sha256.", ""]
    return "---\n" + head + "---\n\n" + "\n".join(L)
