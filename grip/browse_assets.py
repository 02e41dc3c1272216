"""The static files of a `grip browse` site: one page, its style and its script. No framework and nothing fetched:
the data comes in `data.js` (`window.GRIP = {...}`) through a <script> tag, so the site works from file://.
Every text from the data (questions, answers, raw model responses) enters the page as a text node, never as HTML."""

INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>grip browse</title>
<link rel="stylesheet" href="style.css">
</head>
<body>
<header>
  <h1><a href="#" id="home">grip browse</a></h1>
  <span id="source"></span>
  <form id="filters" autocomplete="off">
    <label>domain <select id="f-domain" name="domain"></select></label>
    <label>level <select id="f-level" name="level"></select></label>
    <label>rung <select id="f-rung" name="rung"></select></label>
    <label>model <select id="f-run" name="run"></select></label>
    <label>verdict <select id="f-verdict" name="verdict"></select></label>
  </form>
  <span id="count"></span>
  <span id="legend"></span>
  <span class="keys">keys: &larr; &rarr; (or k j) previous / next item, Esc back to the list</span>
</header>
<main id="view"></main>
<noscript>This page needs JavaScript (it reads data.js from this folder; no server is needed).</noscript>
<script src="data.js"></script>
<script src="app.js"></script>
</body>
</html>
"""

STYLE_CSS = """
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; background: #f4f4f2; }
header { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; align-items: center; gap: 6px 16px;
         padding: 8px 16px; background: #fff; border-bottom: 1px solid #ccc; }
header h1 { font-size: 17px; margin: 0; }
header h1 a { color: inherit; text-decoration: none; }
#source { color: #666; font-family: ui-monospace, monospace; font-size: 12px; }
#filters { display: flex; flex-wrap: wrap; gap: 4px 12px; }
#filters label { color: #555; }
#count { font-weight: 600; }
.keys { color: #888; font-size: 12px; margin-left: auto; }
main { padding: 16px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
.card { display: block; background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 6px; color: inherit;
        text-decoration: none; }
.card:hover, .card:focus { border-color: #0072b2; outline: 2px solid #0072b2; }
.card img { width: 100%; height: auto; aspect-ratio: 1; object-fit: contain; background: #eee; display: block; }
.card .id { font-family: ui-monospace, monospace; font-size: 12px; margin-top: 4px; overflow-wrap: anywhere; }
.card .meta { color: #666; font-size: 12px; }
.chips { display: flex; flex-direction: column; gap: 2px; margin-top: 4px; }
.chiprow { display: flex; gap: 2px; align-items: center; font-size: 11px; color: #666; }
.chiprow .who { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.chip { width: 14px; height: 14px; border-radius: 2px; display: inline-block; font-size: 9px; line-height: 14px;
        text-align: center; color: #fff; }
.correct { background: #009e73; } .wrong { background: #d55e00; } .unparsed { background: #e69f00; }
.failed { background: #777; } .none { background: #ddd; color: #777; }
.chip.failed { background: #fff; color: #555; border: 1px solid #777; line-height: 12px; }
.chip.unparsed { border: 1px dashed #7a5200; line-height: 12px; color: #3d2900; }
#legend { display: flex; gap: 4px; align-items: center; font-size: 12px; }
.more { margin: 16px auto; display: block; padding: 6px 18px; }
.empty { color: #666; padding: 32px; text-align: center; }
nav.itemnav { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 12px; }
nav.itemnav a, nav.itemnav span.off { padding: 3px 10px; border: 1px solid #bbb; border-radius: 4px; background: #fff;
        color: #0b4f79; text-decoration: none; }
nav.itemnav span.off { color: #aaa; }
nav.itemnav .pos { color: #555; }
.item { display: grid; grid-template-columns: minmax(300px, 520px) minmax(380px, 1fr); gap: 20px; align-items: start; }
.pics figure { margin: 0 0 12px; background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 6px; }
.pics img.main { width: 100%; height: auto; display: block; background: #eee; }
.pics figcaption { color: #555; font-size: 12px; margin-top: 4px; }
.grain { display: flex; gap: 6px; flex-wrap: wrap; margin-top: 6px; }
.grain button { border: 2px solid #ddd; background: #fff; padding: 2px; cursor: pointer; font-size: 11px; color: #555; }
.grain button.on { border-color: #0072b2; }
.grain button img { width: 72px; height: 72px; display: block; }
.info h2 { margin: 0 0 2px; font-size: 18px; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.info .meta { color: #555; margin-bottom: 10px; }
.q { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px 10px; margin-bottom: 8px; }
.q.dim { opacity: .45; }
.q .head { display: flex; gap: 8px; align-items: baseline; }
.q .tag { font-weight: 700; color: #0b4f79; white-space: nowrap; }
.q .qid { color: #888; font-family: ui-monospace, monospace; font-size: 12px; }
.q .text { margin: 4px 0; }
.q .instr { color: #666; font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 0; font-size: 13px; }
dl.facts dt { color: #666; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.ref { font-weight: 600; }
.resp { border-top: 1px dashed #ccc; margin-top: 6px; padding-top: 6px; }
.resp .line { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
.badge { color: #fff; border-radius: 3px; padding: 0 6px; font-size: 12px; }
.resp .who { font-weight: 600; }
.resp .parsed { color: #555; font-size: 12px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; border: 1px solid #e2e2e2; padding: 6px;
      margin: 4px 0 0; max-height: 16em; overflow: auto; font-size: 12px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
table.edit { border-collapse: collapse; background: #fff; font-size: 13px; }
table.edit td, table.edit th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; }
table.edit td { font-family: ui-monospace, monospace; }
table.edit td.plain { font-family: inherit; }
table.edit tr.moved td.twin-answer { background: #fde6d4; font-weight: 600; }
details { margin-top: 12px; }
@media (max-width: 900px) { .item { grid-template-columns: 1fr; } }
"""

# Written as a raw string: backslashes stay for the browser.
APP_JS = r"""
"use strict";
(function () {
  const D = window.GRIP;
  const view = document.getElementById("view");
  const PAGE = 120;                      // cards rendered at a time in the list
  const OUTCOMES = ["correct", "wrong", "unparsed", "failed"];
  const FILTERS = ["domain", "level", "rung", "run", "verdict"];
  let shown = PAGE;

  if (!D) {
    view.textContent = "data.js is missing or unreadable: rerun `grip browse`.";
    return;
  }

  // Every text goes in as a text node (append of a string), so markup in the data is shown, never run.
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  function state() {
    const p = new URLSearchParams(location.hash.slice(1));
    const s = {};
    for (const k of FILTERS.concat(["item"])) s[k] = p.get(k) || "";
    return s;
  }

  function href(s, changes) {
    const p = new URLSearchParams();
    const t = Object.assign({}, s, changes || {});
    for (const k of FILTERS.concat(["item"])) if (t[k]) p.set(k, t[k]);
    return "#" + p.toString();
  }

  function outcome(rec) { return rec.o; }

  function rungOf(it, pos) {
    const q = it.questions.find((q) => String(q.position) === String(pos));
    return q ? q.rung : "";
  }

  function runsOf(s) { return s.run !== "" ? [s.run] : D.runs.map((_, i) => String(i)); }

  function matches(it, s) {
    if (s.domain && it.domain !== s.domain) return false;
    if (s.level && String(it.level) !== s.level) return false;
    if (s.verdict) {
      return runsOf(s).some((r) => {
        const v = (it.v || {})[r];
        return !!v && Object.entries(v).some(([pos, recs]) =>
          (!s.rung || rungOf(it, pos) === s.rung) && recs.some((rec) => outcome(rec) === s.verdict));
      });
    }
    if (s.run !== "" && !(it.v || {})[s.run]) return false;
    return true;
  }

  function filtered(s) { return D.items.filter((it) => matches(it, s)); }

  function fillSelect(id, all, options, value) {
    const sel = document.getElementById(id);
    sel.replaceChildren(el("option", { value: "" }, all));
    for (const [v, label] of options) sel.append(el("option", { value: v }, label));
    sel.value = options.some(([v]) => v === value) ? value : "";
  }

  function setFilters(s) {
    fillSelect("f-domain", "all", D.domains.map((d) => [d, d]), s.domain);
    fillSelect("f-level", "all", D.levels.map((l) => [String(l), String(l)]), s.level);
    fillSelect("f-rung", "all", D.rungs.map((r) => [r, r]), s.rung);
    fillSelect("f-run", D.runs.length ? "any" : "none scored", D.runs.map((r, i) => [String(i), r.label]), s.run);
    fillSelect("f-verdict", "any", D.runs.length ? OUTCOMES.map((o) => [o, o]) : [], s.verdict);
  }

  document.getElementById("filters").addEventListener("change", () => {
    const s = {};
    for (const k of FILTERS) s[k] = document.getElementById("f-" + k).value;
    shown = PAGE;
    location.hash = href(s).slice(1) || "all";
  });

  function chip(rec, title, label) {
    const o = rec ? outcome(rec) : "none";
    return el("span", { class: "chip " + o, title: title + ": " + (rec ? o : "not asked") }, label);
  }

  function chipRows(it, s) {
    const box = el("div", { class: "chips" });
    for (const r of runsOf(s)) {
      const v = (it.v || {})[r];
      if (!v) continue;
      const row = el("div", { class: "chiprow" }, el("span", { class: "who" }, D.runs[r].label));
      for (const q of it.questions) {
        if (s.rung && q.rung !== s.rung) continue;
        for (const rec of v[q.position] || []) row.append(chip(rec, "Q" + q.position + " " + q.rung, q.position));
      }
      box.append(row);
    }
    return box;
  }

  function counter(n, total) {
    const c = document.getElementById("count");
    c.textContent = n + " of " + total + " items";
    c.dataset.n = String(n);
  }

  function renderGrid(s) {
    const list = filtered(s);
    counter(list.length, D.items.length);
    const grid = el("div", { class: "grid", id: "grid" });
    for (const it of list.slice(0, shown)) {
      grid.append(el("a", { class: "card", href: href(s, { item: it.id }), "data-id": it.id },
        el("img", { src: it.image, alt: it.id, loading: "lazy", width: 768, height: 768 }),
        el("div", { class: "id" }, it.id),
        el("div", { class: "meta" }, it.domain + " \u00b7 level " + it.level + (it.twin ? " \u00b7 twin" : "")),
        chipRows(it, s)));
    }
    const parts = [list.length ? grid : el("div", { class: "empty" }, "No item matches these filters.")];
    if (list.length > shown) {
      parts.push(el("button", { class: "more", type: "button", onclick: () => { shown += PAGE * 4; render(); } },
        "show more (" + (list.length - shown) + " not shown)"));
    }
    view.replaceChildren(...parts);
  }

  function marginText(m) {
    if (!m) return "";
    const v = typeof m.value === "number" ? +m.value.toPrecision(3) : m.value;
    return v + " " + m.unit + " (threshold " + m.threshold + (m.boundary ? "; boundary: " + m.boundary : "") + ")";
  }

  function show(v) { return typeof v === "string" ? v : JSON.stringify(v); }

  function facts(pairs) {
    const dl = el("dl", { class: "facts" });
    for (const [k, v] of pairs) if (v !== null && v !== undefined && v !== "") dl.append(el("dt", {}, k), el("dd", {}, v));
    return dl;
  }

  function responses(it, q, s) {
    const out = [];
    for (const r of runsOf(s)) {
      for (const rec of ((it.v || {})[r] || {})[q.position] || []) {
        const o = outcome(rec);
        out.push(el("div", { class: "resp", "data-run": r, "data-outcome": o },
          el("div", { class: "line" },
            el("span", { class: "badge " + o }, o),
            rec.val ? el("span", { class: "badge " + rec.val, title: "semantic validator" }, "validated: " + rec.val) : null,
            el("span", { class: "who" }, D.runs[r].label),
            rec.p !== null && rec.p !== undefined ? el("span", { class: "parsed" }, "parsed: " + show(rec.p)) : null,
            rec.r ? el("span", { class: "parsed" }, "(" + rec.r + ")") : null),
          rec.e ? el("div", { class: "parsed" }, "request failed: " + rec.e) : null,
          rec.t !== null && rec.t !== undefined ? el("pre", { class: "raw" }, rec.t)
            : (o === "failed" ? null : el("div", { class: "parsed" }, "(response text not in the site: give --store)"))));
      }
    }
    return out;
  }

  function question(it, q, s, tag, withResponses) {
    return el("div", { class: "q" + (s.rung && q.rung !== s.rung ? " dim" : ""), "data-position": q.position },
      el("div", { class: "head" }, el("span", { class: "tag" }, tag), el("span", {}, q.rung),
        el("span", { class: "qid" }, q.id)),
      el("div", { class: "text" }, q.text),
      q.instruction ? el("div", { class: "instr" }, q.instruction) : null,
      facts([["answer", el("span", { class: "ref" }, q.reference)], ["type", q.type], ["margin", marginText(q.margin)],
             ["edit", q.edit === null || q.edit === undefined ? null : show(q.edit)], ["map", q.map]]),
      withResponses ? responses(it, q, s) : null);
  }

  function ladder(it, qs, s, withResponses) {
    return qs.map((q) => question(it, q, s, q.position === 6 ? "open" : "Q" + q.position, withResponses));
  }

  function pictures(it) {
    const main = el("img", { class: "main", id: "main-image", src: it.image, alt: it.id });
    const cap = el("figcaption", {}, "sigma 0 (clean)");
    const fig = el("figure", {}, main, cap);
    const copies = [["0", it.image]].concat(Object.entries(it.grain || {}));
    if (it.twin) copies.push(["twin", it.twin.image]);
    if (copies.length > 1) {
      const strip = el("div", { class: "grain" });
      for (const [sigma, src] of copies) {
        const label = sigma === "twin" ? "twin" : "sigma " + sigma;
        const b = el("button", { type: "button", class: sigma === "0" ? "on" : "", "data-sigma": sigma,
          onclick: () => {
            main.src = src;
            cap.textContent = sigma === "0" ? "sigma 0 (clean)" : sigma === "twin" ? "swap twin" : "grain sigma " + sigma;
            for (const x of strip.children) x.classList.toggle("on", x === b);
          } }, el("img", { src: src, alt: label }), label);
        strip.append(b);
      }
      fig.append(strip);
    }
    const out = [fig];
    if (it.twin) {
      out.push(el("figure", {}, el("img", { class: "main", id: "twin-image", src: it.twin.image, alt: "twin of " + it.id }),
        el("figcaption", {}, "swap twin (the minimal pair: Q4's answer changes)")));
    }
    return out;
  }

  function twinBlock(it, s) {
    const t = it.twin;
    const edits = (t.edit || []).map((e) => el("tr", {}, el("td", {}, e.path), el("td", {}, show(e.from)),
                                                el("td", {}, show(e.to))));
    const pairs = it.questions.map((q) => [q, (t.questions || []).find((x) => x.position === q.position)]);
    if (it.rephrase && t.rephrase) pairs.push([it.rephrase, t.rephrase]);
    const answers = pairs.map(([q, w]) => {
      const moved = !w || w.reference !== q.reference;
      return el("tr", { class: moved ? "moved" : "" },
        el("th", {}, q === it.rephrase ? "Q4 reworded" : (q.position === 6 ? "open" : "Q" + q.position)),
        el("td", {}, q.id), el("td", {}, q.reference), el("td", { class: "twin-answer" }, w ? w.reference : "—"),
        el("td", { class: "plain" }, w ? marginText(w.margin) : ""));
    });
    return [el("h3", {}, "Swap twin"),
      facts([["changed pixels", t.changed_fraction === undefined ? null : (100 * t.changed_fraction).toFixed(2) + " %"],
             ["SSIM", t.ssim === undefined ? null : t.ssim.toFixed(4)],
             ["smallest margin", t.margin_min === undefined ? null : +Number(t.margin_min).toPrecision(3)]]),
      el("table", { class: "edit", id: "twin-edit" },
        el("tr", {}, el("th", {}, "scene field"), el("th", {}, "item"), el("th", {}, "twin")), edits),
      el("h3", {}, "Ladder answers: item and twin"),
      el("table", { class: "edit", id: "twin-ladder" },
        el("tr", {}, el("th", {}, ""), el("th", {}, "question"), el("th", {}, "item"), el("th", {}, "twin"),
           el("th", {}, "twin margin")), answers)];
  }

  function renderItem(s) {
    const list = filtered(s);
    let k = list.findIndex((it) => it.id === s.item);
    let it = list[k];
    if (!it) { it = D.items.find((x) => x.id === s.item); k = -1; }
    if (!it) { location.hash = href(s, { item: "" }).slice(1) || "all"; return; }
    counter(list.length, D.items.length);
    const prev = k > 0 ? list[k - 1] : null, next = k >= 0 && k + 1 < list.length ? list[k + 1] : null;
    const link = (to, text, id) => to ? el("a", { href: href(s, { item: to.id }), id: id }, text)
                                      : el("span", { class: "off", id: id }, text);
    const nav = el("nav", { class: "itemnav" },
      el("a", { href: href(s, { item: "" }) || "#", id: "back" }, "\u2190 list (Esc)"),
      link(prev, "\u2039 previous (\u2190)", "prev"), link(next, "next \u203a (\u2192)", "next"),
      el("span", { class: "pos" }, k >= 0 ? (k + 1) + " of " + list.length : "not in the filtered list"));
    const info = el("div", { class: "info" },
      el("h2", { id: "item-id" }, it.id),
      el("div", { class: "meta" }, it.domain + " (" + it.family + ") \u00b7 level " + it.level + " \u00b7 index " +
        it.index + " \u00b7 smallest margin " + +Number(it.margin_min).toPrecision(3)),
      el("div", { id: "ladder" }, ladder(it, it.questions, s, true)),
      it.rephrase ? question(it, it.rephrase, s, "Q4 reworded", false) : null,
      it.twin ? twinBlock(it, s) : null,
      el("details", {}, el("summary", {}, "scene"), el("pre", {}, JSON.stringify(it.scene, null, 1))));
    view.replaceChildren(nav, el("div", { class: "item" }, el("div", { class: "pics" }, pictures(it)), info));
    window.scrollTo(0, 0);
  }

  function render() {
    const s = state();
    setFilters(s);
    if (s.item) renderItem(s); else renderGrid(s);
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
    const s = state();
    if (!s.item) return;
    const go = { ArrowLeft: "prev", k: "prev", ArrowRight: "next", j: "next", Escape: "back" }[e.key];
    const a = go && document.getElementById(go);
    if (a && a.tagName === "A") { e.preventDefault(); location.hash = a.getAttribute("href").slice(1) || "all"; }
  });

  if (D.runs.length) {
    document.getElementById("legend").append(...OUTCOMES.map((o) =>
      el("span", {}, el("span", { class: "chip " + o }, "1"), " " + o)));
  }
  document.getElementById("source").textContent = D.source;
  document.title = "grip browse: " + D.source;
  window.addEventListener("hashchange", render);
  render();
})();
"""
