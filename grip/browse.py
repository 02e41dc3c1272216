"""`grip browse`: a static site for looking through an item store, and at how models answered it.

The site is a folder that works from file:// with no server: index.html, style.css, app.js and data.js (the items,
their ladders and the scored responses as one `window.GRIP = {...}` assignment), and the images under img/,
hard-linked from the store when it lies on the same filesystem, else copied. Each item shows its image, grain copies,
the ladder with reference answers, margins and the Q5 edit, the reworded Q4, the swap twin (its image, ladder and
edit list) when the build made one, and per model run the verdict and the raw response to each question.

Raw responses live in the response store, not in scored rows: they are read by key from the stores given with
--store, or from the `responses.sqlite` beside each scored file when none is given."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import click

from grip import GripError

SITE_MARK = "grip-browse.json"   # marks a folder as a site this command wrote (so a rerun may replace it)
GRAIN_SIGMAS = ("15", "25", "40")
DEFAULT_STORE_NAME = "responses.sqlite"


class BrowseError(GripError):
    pass


@dataclass
class Site:
    out: Path
    items: int
    runs: int
    responses: int
    with_text: int
    images: int
    linked: int


# --- the item store ------------------------------------------------------------------------------------------

def _relative(rel, where: str) -> Path:
    """A path a row names inside its domain folder; one that leaves the folder is a corrupt row."""
    p = Path(rel) if isinstance(rel, str) and rel else None
    if p is None or p.is_absolute() or ".." in p.parts:
        raise BrowseError(f"{where}: image path {rel!r} is not a path inside the store; the item store is corrupt")
    return p


def _question(q: dict, where: str) -> dict:
    from grip.answers import answer_from_json
    try:
        ref = answer_from_json(q["answer"]).reference_text()
        out = {"position": q["position"], "rung": q["rung"], "id": q["id"], "text": q["text"],
               "instruction": q.get("instruction"), "type": q["answer"]["type"], "reference": ref,
               "margin": q.get("margin"), "edit": q.get("edit")}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BrowseError(f"{where}: a question cannot be read ({type(e).__name__}: {e}); the item store is "
                          f"corrupt") from None
    if "map" in q:
        out["map"] = q["map"]
    return out


def _item(row: dict, domain_dir: Path, images: dict[Path, str]) -> dict:
    """The site's record of one row; the images it needs go into `images` (source path -> site path)."""
    domain, rid = row["domain"], row["id"]
    where = f"{domain_dir}/items.jsonl: row {rid}"

    def image(rel: Path) -> str:
        src = domain_dir / rel
        if not src.is_file():
            raise BrowseError(f"{src}: image of {rid} is missing; the item store is incomplete")
        site = f"img/{domain}/{rel.as_posix()}"
        images[src] = site
        return quote(site)   # as a URL: an odd character in a file name cannot break the page's links

    rec = {"id": rid, "domain": domain, "family": row["family"], "index": row["index"], "level": row["level"],
           "margin_min": row["margin_min"], "image": image(_relative(row["image"], where)),
           "questions": [_question(q, where) for q in row["questions"]], "scene": row["scene"]}
    hashes = row.get("grain_sha256") or {}
    grain = {}
    for s in GRAIN_SIGMAS:
        rel = Path("grain") / f"s{s}" / f"{rid}.png"
        if s in hashes or (domain_dir / rel).is_file():   # rows from before grain hashes still show their copies
            grain[s] = image(rel)
    if grain:
        rec["grain"] = grain
    if isinstance(row.get("rephrase"), dict):
        rec["rephrase"] = _question(row["rephrase"], where)
    twin = row.get("twin")
    if isinstance(twin, dict):
        t = {"image": image(_relative(twin.get("image"), where)),
             "questions": [_question(q, f"{where} twin") for q in twin.get("questions") or []],
             "edit": twin.get("edit") or []}
        for k in ("margin_min", "changed_fraction", "ssim"):
            if isinstance(twin.get(k), (int, float)):
                t[k] = twin[k]
        if isinstance(twin.get("rephrase"), dict):
            t["rephrase"] = _question(twin["rephrase"], f"{where} twin")
        rec["twin"] = t
    return rec


def load_items(items_dir: Path, domains=(), first: int | None = None) -> tuple[list[dict], dict[Path, str]]:
    """Site records of the rows of the store (registry order; only `domains` when given, only the `first` items of
    each when given), and the images they need (source path -> site path)."""
    from grip.eval.experiments import discover_domains
    from grip.manifest import load_store
    present = discover_domains(items_dir)
    missing = [d for d in domains if d not in present]
    if missing:
        raise BrowseError(f"{items_dir}: no items for domain(s) {', '.join(missing)}; the store holds "
                          f"{', '.join(present)}")
    images: dict[Path, str] = {}
    items = []
    for d in [d for d in present if not domains or d in domains]:
        rows = load_store(items_dir / d)
        bad = [r["id"] for r in rows if r["domain"] != d]
        if bad:
            raise BrowseError(f"{items_dir}/{d}: rows of another domain inside ({bad[0]}); the store is corrupt")
        items.extend(_item(r, items_dir / d, images) for r in rows[:first])
    return items, images


# --- scored files and raw responses --------------------------------------------------------------------------

def _texts(stores: list[Path]) -> dict[str, dict]:
    """response key -> {content, error} from the response stores."""
    from grip.eval.store import ResponseStore
    out: dict[str, dict] = {}
    for path in stores:
        if not path.is_file():
            raise BrowseError(f"{path}: no response store (run `grip eval run` first)")
        store = ResponseStore(path, readonly=True)
        try:
            for r in store.rows():
                err = None
                if r.get("status") != "ok":
                    err = " ".join(str(x) for x in (r.get("error_class"), r.get("http_status"),
                                                    r.get("error_message")) if x not in (None, ""))
                out[r["key"]] = {"t": r.get("content"), "e": err or None}
        finally:
            store.close()
    return out


def _run_label(run: tuple[str, str, str], plain: bool) -> str:
    model, experiment, condition = run
    return model if plain else f"{model} \u00b7 {experiment} {condition}"


def add_scored(items: list[dict], scored: list[Path], stores: list[Path] | None,
               shown=lambda domain, index: True) -> tuple[list[dict], int]:
    """Attach each scored row to its item and question (item['v'][run][position] = [verdict, ...]); returns the
    runs (model label, experiment, condition) and how many rows carry their raw response text. Rows of items left
    out of the site (`shown` false) are skipped. A row naming an item or question the store lacks, or whose
    reference answer differs from the store's, was scored against another item store: a one-line error."""
    from grip.eval.scoring import read_scored
    if stores is None:   # the store `grip eval score` read, when it sits beside its output as by default
        stores = [p.parent / DEFAULT_STORE_NAME for p in scored if (p.parent / DEFAULT_STORE_NAME).is_file()]
        stores = list(dict.fromkeys(stores))
    texts = _texts(stores)
    by_id = {it["id"]: it for it in items}
    runs: dict[tuple[str, str, str], int] = {}
    seen: dict[str, str] = {}
    with_text = 0
    for path in scored:
        for k, r in enumerate(read_scored(path), 1):
            if r.get("key") in seen:
                raise BrowseError(f"{path}: line {k} repeats the scored response of {seen[r['key']]}; give each "
                                  f"scored file once")
            if "key" in r:
                seen[r["key"]] = f"{path}: line {k}"
            if not shown(r["domain"], r.get("index")):
                continue
            it = by_id.get(r["item_id"])
            q = _scored_question(it, r) if it else None
            if q is None or q["id"] != r["question_id"]:
                raise BrowseError(f"{path}: line {k}: item {r['item_id']} question {r['question_id']} is not in the "
                                  f"item store; browse the item store the responses were scored against")
            if isinstance(r.get("reference"), str) and r["reference"] != q["reference"]:
                raise BrowseError(f"{path}: line {k}: {r['item_id']} question {r['question_id']} has reference "
                                  f"{r['reference']!r} but the item store says {q['reference']!r}; browse the item "
                                  f"store the responses were scored against")
            run = runs.setdefault((r["model"], r["experiment"], r["condition"]), len(runs))
            rec = {"o": r["outcome"], "p": r.get("parsed"), "r": r.get("reason")}
            if r.get("validated_outcome") not in (None, r["outcome"]):
                rec["val"] = r["validated_outcome"]
            found = texts.get(r.get("key"))
            if isinstance(r.get("content"), str):
                rec["t"] = r["content"]
            elif found is not None and found["e"] is not None:
                rec["e"] = found["e"]            # a typed failure: what went wrong, no text
            elif found is not None:
                rec["t"] = found["t"] or ""      # an ok reply with no text content shows as empty
            with_text += "t" in rec
            it.setdefault("v", {}).setdefault(str(run), {}).setdefault(str(r["position"]), []).append(rec)
    plain = all(e == "e1" for _, e, _ in runs)
    out = [{"label": _run_label(run, plain), "model": run[0], "experiment": run[1], "condition": run[2]}
           for run in runs]
    return out, with_text


def _scored_question(it: dict, r: dict) -> dict | None:
    """The question a scored row was scored against: its own, or for a probe the twin's Q4 (swap) or the rephrased
    Q4 (consistency) under the same position."""
    own = next((q for q in it["questions"] if q["position"] == r["position"]), None)
    if r.get("experiment") == "swap" and isinstance(it.get("twin"), dict):
        twin_q = next((q for q in it["twin"]["questions"] if q["position"] == r["position"]), None)
        return None if twin_q is None or own is None else dict(twin_q, id=own["id"])
    if r.get("experiment") == "consistency" and r.get("condition") == "rephrase" and it.get("rephrase"):
        return it["rephrase"]
    return own


# --- writing the site ----------------------------------------------------------------------------------------

def _check_out(out: Path) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BrowseError(f"{out}: is a file or a link, not a folder; give a new folder for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / SITE_MARK).is_file():
        raise BrowseError(f"{out}: a folder with other files in it (not an earlier `grip browse` site); give a new "
                          f"or empty folder")
    parent = out.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise BrowseError(f"{out}: {parent} is a file, not a folder")


def _place(src: Path, dst: Path) -> bool:
    """Hard-link src to dst where the filesystem allows, else copy; True when linked."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
        return True
    except OSError:
        shutil.copyfile(src, dst)
        return False


def data_js(data: dict) -> str:
    """The data as one JavaScript assignment: ASCII JSON with every `<` escaped, so no text can close a tag."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return "window.GRIP = " + text.replace("<", "\\u003c") + ";\n"


def write_site(out: Path, data: dict, images: dict[Path, str]) -> int:
    """Write the site into a fresh folder beside `out`, then put it in place of `out` (an earlier site is replaced
    whole, so no stale image stays). Returns how many images were hard-linked."""
    from grip.browse_assets import APP_JS, INDEX_HTML, STYLE_CSS
    _check_out(out)
    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as e:
        raise BrowseError(f"{out}: cannot write the site there ({e.strerror or e})") from None
    try:
        linked = sum(_place(src, tmp / site) for src, site in sorted(images.items(), key=lambda kv: kv[1]))
        for name, text in (("index.html", INDEX_HTML), ("style.css", STYLE_CSS), ("app.js", APP_JS),
                           ("data.js", data_js(data))):
            (tmp / name).write_text(text, encoding="utf-8")
        (tmp / SITE_MARK).write_text(json.dumps({"source": data["source"], "items": len(data["items"])}) + "\n")
        tmp.chmod(0o755)
        old = None
        if out.is_dir():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            out.rename(old / "site")
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return linked


def browse(source, out: Path, scored=(), stores=None, domains=(), first: int | None = None) -> Site:
    """Build the site for an item store (anything `resolve_items` takes) and optional scored files; `domains` and
    `first` (items per domain) keep a site of a large release small enough for a browser."""
    from grip.eval.sources import resolve_items
    out = Path(out)
    _check_out(out)   # before any work: a bad --out is refused at once
    items_dir = Path(resolve_items(source))
    items, images = load_items(items_dir, domains, first)
    kept = {it["domain"] for it in items}

    def shown(domain, index) -> bool:
        return domain in kept and (first is None or not isinstance(index, int) or index < first)

    runs, with_text = add_scored(items, [Path(p) for p in scored], None if stores is None else
                                 [Path(p) for p in stores], shown) if scored else ([], 0)
    domains = list(dict.fromkeys(it["domain"] for it in items))
    rungs = list(dict.fromkeys(q["rung"] for it in items for q in it["questions"]))
    data = {"source": str(source), "domains": domains, "levels": sorted({it["level"] for it in items}),
            "rungs": rungs, "runs": runs, "items": items}
    linked = write_site(out, data, images)
    n_resp = sum(len(recs) for it in items for v in it.get("v", {}).values() for recs in v.values())
    return Site(out, len(items), len(runs), n_resp, with_text, len(images), linked)


@click.command("browse")
@click.argument("source", metavar="DIR")
@click.option("--scored", "scored", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A `grip eval score` output to show verdicts from (repeatable).")
@click.option("--store", "stores", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Response store(s) to read the raw response text from (default: responses.sqlite beside each "
                   "scored file).")
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="SITE",
              help="Folder to write the site into (new, empty, or an earlier `grip browse` site, replaced whole).")
@click.option("--domain", "domains", multiple=True, help="Only this domain (repeatable; default: every one).")
@click.option("--first", type=click.IntRange(min=1), default=None,
              help="Only the first N items of each domain (default: all; a site of 100,000 items is slow to open).")
def browse_cmd(source, scored, stores, out, domains, first):
    """Write a static site to look through items and model responses.

    DIR is an item store: a `grip build` folder, a `grip export` or `grip download` folder, or a Hub repo id. The
    site shows images, grain copies, ladders with answers and margins, swap twins, and with --scored each model's
    verdict and raw response per question. Open SITE/index.html in a browser; no server is needed."""
    from grip.cli import _fail, friendly
    if out is None:
        _fail("give the folder to write the site into: --out SITE")
    if stores and not scored:
        _fail("--store gives the raw text of scored responses; give --scored FILE too")
    site = friendly(browse)(source, out, scored=scored, stores=list(stores) or None, domains=domains, first=first)
    scores = (f"; {site.runs} model runs, {site.responses} scored responses, {site.with_text} with their raw text"
              if site.runs else "")
    click.echo(f"{site.out}: {site.items} items, {site.images} images ({site.linked} hard-linked){scores}; open "
               f"{site.out / 'index.html'}")
