"""`grip browse`: the static site, opened from file:// in a real headless browser (Debian chromium + chromedriver,
driven by selenium): the item count, filters by domain, rung and verdict, the item view (images load, the ladder's
reference answers, the swap twin, raw model responses shown as text and never run), keyboard navigation; the site's
files (self-contained, hard-linked images, the same bytes on a rerun); and one-line errors for bad input."""
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from cli_helpers import ok, one_line_error, run

from grip.answers import answer_from_json
from grip.browse import data_js
from grip.builder import build
from grip.eval.store import COLUMNS, ResponseStore, request_key

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
# Markup a model might answer with: the site must show it as text, never as elements, and never run it.
HOSTILE = ('<script>window.pwned = 1</script><b id="bold">bold</b> & <img id="evil" src="x" '
           'onerror="window.pwned = 2">\nANSWER: <i>3</i>')


def _rows(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def _start_browser(profile: Path, box: dict) -> None:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        opts = webdriver.ChromeOptions()
        opts.binary_location = str(CHROMIUM)
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--window-size=1400,1000", f"--user-data-dir={profile}"):
            opts.add_argument(a)
        box["driver"] = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)   # a path: no selenium-manager
    except Exception as e:  # noqa: BLE001 - reported by the fixture
        box["error"] = e


def _plant_hostile(store_path: Path) -> None:
    """A second model in the response store, made from the random model's requests: it answers HOSTILE to every
    question and fails (HTTP 400, a typed failure) on clock_reading's Q2."""
    with ResponseStore(store_path) as store:
        for r in list(store.rows()):
            r = {k: v for k, v in r.items() if k in COLUMNS and k != "created_at"}
            r.update(model="hostile", response_model="hostile", raw_body=json.dumps({"content": HOSTILE}),
                     content=HOSTILE)
            if r["domain"] == "clock_reading" and r["position"] == 2:
                r.update(status="failed", http_status=400, error_class="ClientError", raw_body=None, content=None,
                         error_message="Error code: 400", response_model=None)
            r["key"] = request_key("hostile", r["base_url"], r["request"], r["sampling"], r["experiment"],
                                   r["condition"])
            assert store.put(r)


def _world(root: Path) -> dict:
    items, runs = root / "items", root / "runs"
    build("clock_reading", 3, items, grain_subset=1)
    build("nested_squares", 3, items, grain_subset=1, twins=True)
    store = runs / "responses.sqlite"
    ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store", store, "--quiet"))
    _plant_hostile(store)
    scored = {}
    for m in ("random", "hostile"):
        scored[m] = runs / f"{m}.jsonl"
        ok(run("eval", "score", "--store", store, "--items", items, "--model", m, "--out", scored[m]))
    site = root / "site"
    out = ok(run("browse", items, "--scored", scored["random"], "--scored", scored["hostile"], "--out", site))
    rows = {d: _rows(items / d / "items.jsonl") for d in ("clock_reading", "nested_squares")}
    return {"root": root, "items": items, "store": store, "scored": scored, "site": site, "out": out, "rows": rows,
            "verdicts": [r for m in scored for r in _rows(scored[m])]}


@pytest.fixture(scope="module")
def module_env(tmp_path_factory):
    """The store, runs, scored files and site, and one headless browser, started while the store is built."""
    if not (CHROMIUM.is_file() and DRIVER.is_file()):
        pytest.fail(f"{CHROMIUM} and {DRIVER} are needed (Debian chromium, chromium-driver): run `make browser`")
    box: dict = {}
    starter = threading.Thread(target=_start_browser, args=(tmp_path_factory.mktemp("chromium"), box))
    starter.start()
    try:
        world = _world(tmp_path_factory.mktemp("browse"))
    except BaseException:
        starter.join()
        if "driver" in box:
            box["driver"].quit()
        raise
    starter.join()
    if "error" in box:
        raise box["error"]
    yield world, box["driver"]
    box["driver"].quit()


@pytest.fixture(scope="module")
def world(module_env):
    return module_env[0]


@pytest.fixture(scope="module")
def browser(module_env):
    return module_env[1]


def _open(browser, site: Path, fragment: str = "") -> None:
    browser.get(site.joinpath("index.html").as_uri() + fragment)


def _wait(browser, cond, what: str):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(browser, 5, poll_frequency=0.02).until(lambda d: cond(d), message=what)


def _expect_count(browser, n: int, what: str) -> None:
    shown = lambda d: d.execute_script(   # noqa: E731
        "return [+document.getElementById('count').dataset.n, document.querySelectorAll('.card').length]")
    _wait(browser, lambda d: shown(d) == [n, n], f"{what}: expected {n} items, the page shows {shown(browser)}")


def _choose(browser, name: str, value: str = "", text: str | None = None) -> None:
    """Pick an option of a filter as a person would (the form's change handler runs), by value or by its text."""
    done = browser.execute_script(
        "const s = document.getElementById('f-' + arguments[0]);"
        "const o = [...s.options].find(o => arguments[2] === null ? o.value === arguments[1] : o.text === arguments[2]);"
        "if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change', {bubbles: true})); return true;",
        name, value, text)
    assert done, f"filter {name} has no option {text if text is not None else value!r}"


def _expected(world, model: str, outcome: str, domain: str | None = None, rung: str | None = None) -> int:
    return len({r["item_id"] for r in world["verdicts"] if r["model"] == model and r["outcome"] == outcome
                and (domain is None or r["domain"] == domain) and (rung is None or r["rung"] == rung)})


def test_list_counts_and_filters(world, browser):
    assert "6 items, 15 images (15 hard-linked); 2 model runs, 60 scored responses, 57 with their raw text" \
        in world["out"]                           # a failed request has no text
    _open(browser, world["site"])
    _expect_count(browser, 6, "no filter")
    _wait(browser, lambda d: d.execute_script("return [...document.querySelectorAll('.card img')].every(i =>"
                                              " i.complete && i.naturalWidth === 768)"), "thumbnails load")
    sizes = browser.execute_script("return [...document.querySelectorAll('.card img')].map(i => [i.width, i.height])")
    assert all(60 < w == h < 400 for w, h in sizes), sizes    # square thumbnails, not the PNG's 768 px height
    _choose(browser, "domain", "nested_squares")
    _expect_count(browser, 3, "domain nested_squares")
    assert all(c.get_attribute("data-id").startswith("nested_squares_")
               for c in browser.find_elements("css selector", ".card"))
    _choose(browser, "domain", "")
    _choose(browser, "level", "2")
    _expect_count(browser, sum(r["level"] == 2 for rows in world["rows"].values() for r in rows), "level 2")
    _choose(browser, "level", "")
    _choose(browser, "run", text="hostile")
    _choose(browser, "verdict", "unparsed")
    _expect_count(browser, _expected(world, "hostile", "unparsed"), "hostile unparsed")
    _choose(browser, "verdict", "failed")
    n_failed = _expected(world, "hostile", "failed")
    assert n_failed == 3                                 # every clock item's Q2 failed (HTTP 400)
    _expect_count(browser, n_failed, "hostile failed")
    _choose(browser, "run", text="random")
    _choose(browser, "verdict", "correct")
    _expect_count(browser, _expected(world, "random", "correct"), "random correct")
    _choose(browser, "rung", "observe")
    n = _expected(world, "random", "correct", rung="observe")
    assert n != _expected(world, "random", "correct")    # the rung filter must change the count to be tested
    _expect_count(browser, n, "random correct at observe")
    _choose(browser, "rung", "")
    _choose(browser, "verdict", "wrong")
    _choose(browser, "domain", "clock_reading")
    _expect_count(browser, _expected(world, "random", "wrong", domain="clock_reading"), "random wrong on clocks")


def _loaded(browser, ids) -> bool:
    return browser.execute_script(
        "return arguments[0].every(id => { const i = document.getElementById(id);"
        " return i && i.complete && i.naturalWidth > 0; })", list(ids))


def _item_shown(browser, item_id: str):
    return _wait(browser, lambda d: d.execute_script(
        "const h = document.getElementById('item-id'); return h && h.textContent") == item_id, f"item {item_id}")


def test_item_view(world, browser, tmp_path):
    row = world["rows"]["nested_squares"][0]
    _open(browser, world["site"], f"#item={row['id']}")
    _item_shown(browser, row["id"])
    _wait(browser, lambda d: _loaded(d, ["main-image", "twin-image"]), "item and twin images load")
    assert browser.execute_script("return document.getElementById('main-image').naturalWidth") == 768
    thumbs = browser.find_elements("css selector", ".grain button")
    assert [b.get_attribute("data-sigma") for b in thumbs] == ["0", "15", "25", "40", "twin"]
    _wait(browser, lambda d: d.execute_script("return [...document.querySelectorAll('.grain img')]"
                                              ".every(i => i.complete && i.naturalWidth > 0)"), "grain copies load")
    # the ladder: every question with its reference answer, the Q5 edit among the facts
    qs = browser.find_elements("css selector", "#ladder > .q")
    assert [q.get_attribute("data-position") for q in qs] == ["1", "2", "3", "4", "5", "6"]
    refs = [q.find_element("css selector", ".ref").text for q in qs]
    assert refs == [answer_from_json(q["answer"]).reference_text() for q in row["questions"]]
    assert row["questions"][4]["edit"] in qs[4].text
    # raw responses: the hostile markup is shown as text, no element of it exists and nothing of it ran
    raws = browser.execute_script("return [...document.querySelectorAll('#ladder .resp pre.raw')]"
                                  ".map(p => p.textContent)")
    assert raws.count(HOSTILE) == 5 and sum(t.startswith("A random guess.") for t in raws) == 5   # E1: Q1-Q5
    assert browser.execute_script("return window.pwned === undefined && !document.getElementById('bold')"
                                  " && !document.getElementById('evil')")
    # the swap twin: its edit list and its ladder's answers
    edit = browser.find_elements("css selector", "#twin-edit tr")[1:]
    assert [tr.find_element("css selector", "td").text for tr in edit] == [e["path"] for e in row["twin"]["edit"]]
    twin_refs = [td.text for td in browser.find_elements("css selector", "#twin-ladder td.twin-answer")]
    assert twin_refs[:6] == [answer_from_json(q["answer"]).reference_text() for q in row["twin"]["questions"]]
    # a grain copy replaces the main image on click
    thumbs[2].click()
    _wait(browser, lambda d: d.find_element("id", "main-image").get_attribute("src").endswith(
        f"/grain/s25/{row['id']}.png"), "sigma 25 shown")
    shot = tmp_path / "shot.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    if os.environ.get("GRIP_BROWSE_SHOTS"):      # for a person to look at
        shutil.copy(shot, Path(os.environ["GRIP_BROWSE_SHOTS"]) / "shot.png")
    # keyboard: previous (the last clock, whose Q2 failed), next, back to the list
    browser.find_element("tag name", "body").send_keys("\ue012")   # ArrowLeft
    _item_shown(browser, "clock_reading_000002")
    failed = browser.find_elements("css selector", '#ladder > .q[data-position="2"] .resp[data-outcome="failed"]')
    assert len(failed) == 1 and "400" in failed[0].text and not failed[0].find_elements("css selector", "pre")
    browser.find_element("tag name", "body").send_keys("j")
    _item_shown(browser, row["id"])
    browser.find_element("tag name", "body").send_keys("\ue00c")   # Escape
    _expect_count(browser, 6, "back to the list")


def test_site_files(world):
    site, items = world["site"], world["items"]
    text = (site / "data.js").read_text()
    assert "<" not in text and text.startswith("window.GRIP = ")
    data = _data(site)
    assert [it["id"] for it in data["items"]] == [r["id"] for d in world["rows"].values() for r in d]
    paths = set(re.findall(r'"(img/[^"]+)"', text))
    assert len(paths) == 6 + 2 * 3 + 3            # items, grain copies of item 0 of each domain, clock twins
    for p in paths:                               # self-contained: every image is in the site, linked on one disk
        src = items / p[len("img/"):]
        assert (site / p).stat().st_ino == src.stat().st_ino
    # a rerun replaces the site whole (no stale file) with the same bytes
    (site / "img" / "stale.png").write_bytes(b"x")
    ok(run("browse", items, "--scored", world["scored"]["random"], "--scored", world["scored"]["hostile"],
           "--out", site))
    assert (site / "data.js").read_text() == text and not (site / "img" / "stale.png").exists()
    assert not [p for p in site.parent.iterdir() if p.name.startswith(".site.")]


def _data(site: Path) -> dict:
    text = (site / "data.js").read_text()
    return json.loads(text[len("window.GRIP = "):].rstrip().rstrip(";"))


def test_domain_and_first_keep_a_site_small(world, tmp_path):
    ok(run("browse", world["items"], "--domain", "clock_reading", "--first", 2, "--scored", world["scored"]["random"],
           "--out", tmp_path / "site"))
    data = _data(tmp_path / "site")
    assert [it["id"] for it in data["items"]] == ["clock_reading_000000", "clock_reading_000001"]
    assert all(len(it["v"]["0"]) == 5 for it in data["items"])      # each kept item's five scored rungs
    assert sorted(p.name for p in (tmp_path / "site" / "img" / "clock_reading" / "images").iterdir()) == \
        ["clock_reading_000000.png", "clock_reading_000001.png"]
    one_line_error(run("browse", world["items"], "--domain", "gear_trains", "--out", tmp_path / "s2"),
                   "no items for domain")
    moved = tmp_path / "elsewhere.jsonl"       # no store beside it: the text comes from --store, or is absent
    shutil.copy(world["scored"]["hostile"], moved)
    out = ok(run("browse", world["items"], "--scored", moved, "--out", tmp_path / "s3"))
    assert "30 scored responses, 0 with their raw text" in out
    out = ok(run("browse", world["items"], "--scored", moved, "--store", world["store"], "--out", tmp_path / "s3"))
    assert "30 scored responses, 27 with their raw text" in out
    assert sum(r.get("t") == HOSTILE for it in _data(tmp_path / "s3")["items"] for v in it["v"].values()
               for recs in v.values() for r in recs) == 27


def test_data_js_escapes_markup():
    text = data_js({"t": "</script><!-- \u2028 & é"})
    assert "<" not in text and "\u2028" not in text and "é" not in text
    assert json.loads(text[len("window.GRIP = "):-2]) == {"t": "</script><!-- \u2028 & é"}


def test_bad_input_is_one_line(world, tmp_path):
    items, scored = world["items"], world["scored"]["random"]
    site = tmp_path / "site"
    (tmp_path / "empty").mkdir()
    one_line_error(run("browse", tmp_path / "empty", "--out", site), "not a grip item store|neither an item store")
    one_line_error(run("browse", tmp_path / "nowhere", "--out", site), "no such|neither an item store")
    one_line_error(run("browse", items), "--out SITE")
    one_line_error(run("browse", items, "--scored", tmp_path / "none.jsonl", "--out", site), "no scored file")
    (tmp_path / "junk.jsonl").write_bytes(b"\xff\xfe not json")
    one_line_error(run("browse", items, "--scored", tmp_path / "junk.jsonl", "--out", site), "not UTF-8")
    rows = _rows(scored)
    other = dict(rows[0], reference="an answer from another store")
    (tmp_path / "other.jsonl").write_text(json.dumps(other) + "\n")
    one_line_error(run("browse", items, "--scored", tmp_path / "other.jsonl", "--out", site), "another store|says")
    (tmp_path / "gone.jsonl").write_text(json.dumps(dict(rows[0], item_id="clock_reading_000099")) + "\n")
    one_line_error(run("browse", items, "--scored", tmp_path / "gone.jsonl", "--out", site), "not in the item store")
    one_line_error(run("browse", items, "--scored", scored, "--store", tmp_path / "no.sqlite", "--out", site),
                   "no response store")
    one_line_error(run("browse", items, "--store", world["store"], "--out", site), "--scored")
    one_line_error(run("browse", items, "--scored", scored, "--scored", scored, "--out", site), "repeats")
    (tmp_path / "file").write_text("x")
    one_line_error(run("browse", items, "--out", tmp_path / "file"), "is a file")
    one_line_error(run("browse", items, "--out", tmp_path / "file" / "site"), "is a file|cannot write")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    one_line_error(run("browse", items, "--out", mine), "other files")
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert not site.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_probe_rows_are_shown_against_the_question_they_were_scored_on(world, tmp_path):
    """Swap rows are scored against the twin's Q4 and consistency rows against the rephrased Q4: the browser takes
    them, not as rows from another store."""
    items, store, scored = world["items"], tmp_path / "responses.sqlite", tmp_path / "probes.jsonl"
    for exp in ("swap", "consistency"):
        ok(run("eval", "run", "--experiment", exp, "--items", items, "--domain", "nested_squares", "--model", "random",
               "--store", store, "--quiet"))
    ok(run("eval", "score", "--store", store, "--items", items, "--out", scored))
    rows = _rows(scored)
    assert {r["experiment"] for r in rows} == {"e1", "swap", "consistency"}
    out = ok(run("browse", items, "--scored", scored, "--out", tmp_path / "site"))
    assert f"{len(rows)} scored responses" in out
