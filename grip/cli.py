"""The `grip` command. Errors the user can fix print one line (`grip: error: ...`) and exit with code 2."""
from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path

# One BLAS thread per process, set before numpy loads: grip's arrays are small, and starting OpenBLAS's thread pool
# costs ~0.13 s of CPU in every `grip` process and build worker. A value the user set is kept.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from grip import GripError  # noqa: E402
from grip._help import FullHelpGroup  # noqa: E402
from grip.manifest import MAX_ITEMS, MAX_SEED  # noqa: E402  (stdlib only: `grip list` stays light)


def _fail(msg: str) -> None:
    click.echo(f"grip: error: {msg}", err=True)
    sys.exit(2)


def friendly(fn):
    """Turn the errors a user can cause into one line and exit code 2, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        from grip.domains import UnknownDomain
        try:
            return fn(*a, **kw)
        except UnknownDomain as e:
            _fail(str(e))
        except GripError as e:
            _fail(str(e))
        except KeyboardInterrupt:
            _fail("interrupted; rerun the same command to resume")
        except BrokenPipeError:
            raise   # the reader went away (`grip ... | head -1`): click exits quietly, status 1, as Unix tools do
        except OSError as e:
            _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
    return wrapper


# A whole number as typed: ASCII digits only. Bounds where a value could exhaust memory or disk are MAX_ITEMS and
# MAX_SEED (the builder and the manifest reader enforce the same ones) and the sheet's, below.
_DIGITS = re.compile(r"[+-]?[0-9]{1,30}")


def _range_text(low, high) -> str:
    if low is not None and high is not None:
        return f"a whole number from {low:,} to {high:,}"
    if low is not None:
        return f"a whole number of at least {low:,}"
    return "a whole number"


class _Int(click.ParamType):
    """A whole number written in ASCII digits, within bounds. (click's INT goes through int(), which also takes
    '٣', '1_000' and ' 3 '.)"""
    name = "integer"

    def __init__(self, low: int | None = None, high: int | None = None):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            text = str(value)
            if not _DIGITS.fullmatch(text):
                self.fail(f"{text!r} is not {_range_text(self.low, self.high)} (digits 0-9)", param, ctx)
            n = int(text)
        if (self.low is not None and n < self.low) or (self.high is not None and n > self.high):
            self.fail(f"must be {_range_text(self.low, self.high)}, got {n}", param, ctx)
        return n


class _Path(click.Path):
    """click.Path that refuses an empty value: Path('') is the working folder, never what was meant."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("is empty; give a path", param, ctx)
        return super().convert(value, param, ctx)


class _Grip(FullHelpGroup):
    """Usage errors (a bad option value, a missing argument) in the house form: one line `grip: error: ...`, exit 2,
    with the command's usage left out (`grip COMMAND --help` has it)."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.exceptions.Abort:
            _fail("interrupted")
        except click.exceptions.NoArgsIsHelpError as e:   # `grip` or `grip eval` alone: the help, as usual
            click.echo(e.ctx.get_help())
            sys.exit(0)
        except click.UsageError as e:
            cmd = e.ctx.command_path if e.ctx is not None else "grip"
            argv = list(kwargs.get("args") or (args[0] if args else None) or sys.argv[1:])
            if (e.ctx is None or e.ctx.parent is None) and argv and argv[0] in self.commands:
                cmd = f"grip {argv[0]}"   # an option error inside a command is raised on the group's context
            _fail(f"{e.format_message()} (see `{cmd} --help`)".replace("\n", " "))
        except click.ClickException as e:
            _fail(e.format_message().replace("\n", " "))
        if isinstance(rv, int) and rv:
            sys.exit(rv)
        return rv


@click.group(cls=_Grip, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="grip-bench", prog_name="grip")
def main():
    """grip: procedural visual-reasoning scenes with exact ground truth."""


@main.command("list")
@friendly
def list_cmd():
    """Registered domains, one line each: id and family (imports no domain module)."""
    from grip.domains import REGISTRY, ids
    for d in ids():
        fam = REGISTRY[d][0] if d in REGISTRY else "external"
        click.echo(f"{d:<24} {fam}")


def _grain_option(value: str) -> int | None:
    if value == "all":
        return None
    if not _DIGITS.fullmatch(str(value)):
        _fail(f"--grain-subset must be a whole number (digits 0-9) or 'all', got {value!r}")
    k = int(value)
    if k < 0:
        _fail(f"--grain-subset must be >= 0, got {k}")
    return k


@main.command()
@click.option("--domain", "domain", default=None, help="Domain id (see `grip list`).")
@click.option("--n", "n", type=_Int(1, MAX_ITEMS), default=None,
              help=f"Number of items (images), 1 to {MAX_ITEMS:,}.")
@click.option("--manifest", type=_Path(dir_okay=False, path_type=Path), default=None,
              help="Build a whole release from a recipe (manifests/*.toml) instead of --domain/--n.")
@click.option("--out", type=_Path(file_okay=False, path_type=Path), default=Path("out"), show_default=True)
@click.option("--seed", type=_Int(0, MAX_SEED), default=0, show_default=True,
              help="Base seed (the release name), 0 to 2**63-1 as in a manifest.")
@click.option("--level", type=_Int(), default=None, help="Fix the difficulty level (default: levels 1-3 in turn).")
@click.option("--workers", type=_Int(1), default=1, show_default=True,
              help="Worker processes, at most 4 per CPU (never more than there are items); with --executor ray, "
                   "Ray tasks at a time.")
@click.option("--grain-subset", "grain_subset", default="20", show_default=True,
              help="Grain copies (sigma 15/25/40) for the first K items, or 'all'.")
@click.option("--grain", "grain_all", type=click.Choice(["all"]), default=None, help="Same as --grain-subset all.")
@click.option("--quiet", is_flag=True, help="No progress bar (and no progress lines when stderr is not a terminal).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where items are made: a local process pool, or Ray tasks (pip install 'grip-bench[ray]'); "
                   "the same bytes either way.")
@click.option("--address", default=None,
              help="With --executor ray: the Ray cluster to join (as `ray start --head` prints it; every node needs "
                   "this grip). Default: a local Ray of --workers CPUs.")
@click.option("--twins", is_flag=True,
              help="Also each item's swap twin (its minimal pair) in twins/<id>.png and the row's `twin`; items whose "
                   "scene has no minimal pair are resampled, so the items differ from a plain build's.")
@click.pass_context
@friendly
def build(ctx, domain, n, manifest, out, seed, level, workers, grain_subset, grain_all, quiet, executor, address,
          twins):
    """Build (or resume) an item store: images, items.jsonl, build.json, grain copies. With --manifest, every
    domain of a release recipe, one store per domain under --out. Progress goes to stderr: a bar on a terminal,
    otherwise a line every few seconds."""
    progress = False if quiet else ("bar" if sys.stderr.isatty() else "lines")
    if manifest is not None:
        from click.core import ParameterSource
        clash = [f"--{p.replace('_', '-')}" for p in ("domain", "n", "seed", "level", "grain_subset", "grain_all")
                 if ctx.get_parameter_source(p) not in (ParameterSource.DEFAULT, None)]
        if clash:
            _fail(f"--manifest sets domains, counts, seeds, levels and grain; leave out {', '.join(clash)}")
        from grip.release import build_release
        opts = _executor_options(build_release, executor, address)
        def note():   # once the recipe and --out passed their checks, so an error stays one line
            if ctx.get_parameter_source("workers") in (ParameterSource.DEFAULT, None):
                from grip.executors import cpu_count
                click.echo(f"grip: building with 1 worker process (this machine has {cpu_count()} CPUs; "
                           f"--workers N for more)", err=True)
        from grip.audit import SummariesBeside
        # each domain's closing audit runs while the next one builds (in this process with Ray, which a fork of
        # the driver should not copy)
        audits = SummariesBeside(beside=executor == "local")

        def report(res):
            _echo_audit(audits.take())
            _report_build(res, audit=False)
            audits.submit(res.domain_dir)
        try:
            try:
                res = build_release(manifest, out, workers=workers, progress=progress, on_domain=report,
                                    twins=twins, on_start=note, **opts)
            except Exception:
                try:
                    _echo_audit(audits.take())   # the last built domain's line, then the error
                except Exception:
                    pass                         # the error is the build's, not the audit's
                raise
            _echo_audit(audits.take())
        finally:
            audits.close()
        click.echo(f"{res.out}: release {res.recipe.name!r}, {len(res.results)} domains, "
                   f"{sum(r.n for r in res.results)} items")
        return
    if domain is None or n is None:
        _fail("give --domain and --n, or --manifest FILE")
    from grip.builder import build as run_build
    k = None if grain_all == "all" else _grain_option(grain_subset)
    res = run_build(domain, n, out, seed=seed, level=level, workers=workers, grain_subset=k, progress=progress,
                    twins=twins, executor=executor, address=address)
    _report_build(res)


def _executor_options(build_release, executor: str, address: str | None) -> dict:
    """--executor/--address for a release build."""
    if address is not None and executor != "ray":
        _fail("--address names a Ray cluster; it goes with --executor ray")
    return {"executor": executor, "address": address}


def _report_build(res, audit: bool = True) -> None:
    rate = f"{res.built / res.seconds:.1f} items/s" if res.built and res.seconds > 0 else "nothing to do"
    rej = res.summary["attempts"]["total"] - res.summary["items"]
    click.echo(f"{res.domain_dir}: {res.n} items ({res.built} built, {res.resumed} already there) in "
               f"{res.seconds:.1f} s, {rate}; {rej} candidate scenes rejected")
    if audit:
        from grip.audit import build_summary
        click.echo(build_summary(res.domain_dir))


def _echo_audit(line: str | None) -> None:
    if line is not None:
        click.echo(line)


@main.command("export")
@click.argument("store", metavar="STORE", type=click.Path(path_type=Path))
@click.option("--to", "hub_dir", type=_Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write the Hub layout into (replaced whole if it holds an earlier export).")
@click.option("--core", type=_Int(1, MAX_ITEMS), default=None,
              help="Core subset size (default: the recipe's, else 20).")
@click.option("--name", default=None, help="Dataset name on the card (default: the recipe's, else GRIP).")
@click.option("--license", "license_", default=None, help="License id for the card (default: cc-by-4.0).")
@friendly
def export_cmd(store, hub_dir, core, name, license_):
    """Turn the item stores of STORE (a `grip build` folder) into the Hub layout: parquet shards per domain and a
    card."""
    if hub_dir is None:
        _fail("give the folder to write the Hub layout into: --to HUB_DIR")
    from grip.hub import export
    res = export(store, hub_dir, core=core, name=name, license=license_)
    for d, info in res.index["domains"].items():
        parts = ", ".join(f"{s} {si['rows']} rows in {len(si['shards'])} shard(s)" for s, si in info["splits"].items())
        click.echo(f"{d}: {parts}")
    size = sum(sh["bytes"] for info in res.index["domains"].values() for si in info["splits"].values()
               for sh in si["shards"])
    click.echo(f"{res.hub_dir}: {len(res.index['domains'])} configs, {size / 2**20:.1f} MiB; README.md card written")


@main.command("push")
@click.argument("hub_dir", type=click.Path(path_type=Path))
@click.option("--repo", default=None, help="Dataset repository ORG/NAME.")
@click.option("--private", is_flag=True, help="Create the repository private.")
@click.option("--revision", default=None, help="Tag the pushed commit with this name (e.g. v1.0).")
@friendly
def push_cmd(hub_dir, repo, private, revision):
    """Upload an export to the Hugging Face Hub in one commit (token from HF_TOKEN or `hf auth login`)."""
    if repo is None:
        _fail("give the dataset repository to push to: --repo ORG/NAME")
    from grip.hub import push
    res = push(hub_dir, repo, private=private, revision=revision)
    click.echo(f"pushed {hub_dir} to {repo} (commit {res.commit}" + (f", tag {res.revision}" if res.revision else "")
               + ")")
    click.echo(res.url)


@main.command("download")
@click.argument("repo")
@click.option("--domain", default=None, help="Fetch only this domain's config.")
@click.option("--revision", default=None, help="Branch, tag or commit (default: main).")
@click.option("--out", type=_Path(file_okay=False, path_type=Path), default=None,
              help="Local folder (default: ./NAME).")
@friendly
def download_cmd(repo, domain, revision, out):
    """Fetch an export from the Hub and check every shard's sha256; load it with
    datasets.load_dataset(FOLDER, DOMAIN) or directly with load_dataset(REPO, DOMAIN), or evaluate on it with
    `grip eval run --items FOLDER` (or `--items REPO`)."""
    from grip.hub import download
    path, index = download(repo, domain=domain, revision=revision, out=out)
    doms = [domain] if domain else list(index["domains"])
    rows = sum(si["rows"] for d in doms for si in index["domains"][d]["splits"].values())
    click.echo(f"{path}: {', '.join(doms)} ({rows} rows, sha256 checked)")


def _item(domain: str, index: int, seed: int, level: int | None):
    from grip.builder import generate, release_name
    from grip.domains import get
    from grip.seeding import item_seed, level_for
    dom = get(domain)
    if level is not None and level not in dom.levels:
        _fail(f"--level must be one of {list(dom.levels)}, got {level}")
    lvl = level_for(index, level)
    return dom, lvl, generate(dom, item_seed(release_name(seed), domain, index), lvl)


@main.command()
@click.argument("domain")
@click.option("--index", type=_Int(0, MAX_ITEMS - 1), default=0, show_default=True)
@click.option("--seed", type=_Int(0, MAX_SEED), default=0, show_default=True)
@click.option("--level", type=_Int(), default=None)
@click.option("--out", type=_Path(dir_okay=False, path_type=Path), default=None,
              help="PNG path (default: <domain>_<index>.png); a new path or a regular file, never a link or device.")
@friendly
def show(domain, index, seed, level, out):
    """Write one item's PNG and print its ladder with answers and margins."""
    from grip.manifest import atomic_write_bytes, check_output_file
    from grip.renderers.canvas import encode_png
    out = check_output_file(out or Path(f"{domain}_{index:06d}.png"), "--out")
    dom, lvl, g = _item(domain, index, seed, level)
    atomic_write_bytes(out, encode_png(g.rgb))
    click.echo(f"{out}  ({dom.id}, level {lvl}, {g.attempts} attempt{'' if g.attempts == 1 else 's'})")
    for q in g.ladder.questions:
        tag = "open" if q.is_open else f"Q{q.position}"
        m = q.margin
        click.echo(f"{tag} [{q.id}] {q.text}")
        click.echo(f"     answer: {q.answer.reference_text()}   ({q.answer.kind})")
        click.echo(f"     margin: {m.value:.3g} {m.unit} (threshold {m.threshold:g}{'; ' + m.boundary if m.boundary else ''})"
                   + (f"   edit: {q.edit}" if q.edit else ""))


# Contact-sheet bounds, as grip.sheet has them (not imported here: it loads cairo); a test keeps them equal.
SHEET_MAX_ITEMS, SHEET_CELL, SHEET_MAX_COLS, SHEET_MAX_SIDE_PX = 400, (32, 2048), 64, 16384


@main.command()
@click.argument("domain")
@click.option("--n", "n", type=_Int(1, SHEET_MAX_ITEMS), default=9, show_default=True,
              help=f"Number of items, 1 to {SHEET_MAX_ITEMS}.")
@click.option("--out", type=_Path(dir_okay=False, path_type=Path), required=True,
              help="PNG path: a new path or a regular file, never a link or device.")
@click.option("--seed", type=_Int(0, MAX_SEED), default=0, show_default=True)
@click.option("--level", type=_Int(), default=None)
@click.option("--start", type=_Int(0, MAX_ITEMS - 1), default=0, show_default=True, help="First item index.")
@click.option("--cell", type=_Int(*SHEET_CELL), default=384, show_default=True,
              help=f"Image width in the sheet, {SHEET_CELL[0]} to {SHEET_CELL[1]} px.")
@click.option("--cols", type=_Int(1, SHEET_MAX_COLS), default=3, show_default=True,
              help=f"Columns, 1 to {SHEET_MAX_COLS}; the whole sheet must stay within "
                   f"{SHEET_MAX_SIDE_PX} px a side.")
@friendly
def sheet(domain, n, out, seed, level, start, cell, cols):
    """A contact sheet: items with their ladder answers printed under each, for people to look at. DOMAIN may also
    be a private helper module of domains (e.g. _edges): then the items of the domains that use it, in turn."""
    from grip.domains import _helper_users
    from grip.manifest import atomic_write_bytes, check_output_file
    from grip.sheet import check_sheet_size, contact_sheet
    out = check_output_file(out, "--out")
    check_sheet_size(n, cell, cols)
    if start + n > MAX_ITEMS:
        _fail(f"--start + --n must be at most {MAX_ITEMS:,}, got {start + n}")
    users = _helper_users(domain)
    if users:   # item start + i // k of the (i mod k)-th user, k users: each domain's items in index order
        picks = [(users[i % len(users)], start + i // len(users)) for i in range(n)]
        items = [(d, j, _item(d, j, seed, level)) for d, j in picks]
        png = contact_sheet([(f"{d} #{j}  L{lvl}", g) for d, j, (_, lvl, g) in items], cell, cols)
        click_line = f"{n} items of the domains that use {domain} ({', '.join(users)})"
    else:
        items = [_item(domain, start + i, seed, level) for i in range(n)]
        png = contact_sheet([(f"#{start + i}  L{lvl}", g) for i, (_, lvl, g) in enumerate(items)], cell, cols)
        click_line = f"{n} items of {domain}"
    atomic_write_bytes(out, png)
    click.echo(f"{out}: {click_line}")


@main.command()
@click.argument("domain_ids", nargs=-1, metavar="[DOMAIN]...")
@friendly
def check(domain_ids):
    """Run the conformance checks (grip.conformance) on domains (default: every registered one). Exit code 1 if
    any check fails."""
    from grip.conformance import check_domain
    from grip.domains import get, ids
    failed = 0
    for d in domain_ids or ids():
        results = check_domain(get(d))
        bad = {k: v for k, v in results.items() if v}
        failed += bool(bad)
        click.echo(f"{d:<24} {'ok' if not bad else 'FAIL'}  ({len(results) - len(bad)}/{len(results)} checks pass)")
        for name, problems in bad.items():
            click.echo(f"    {name}: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
    sys.exit(1 if failed else 0)


_Grip.lazy = {"eval": "grip.eval.cli:eval_group", "strips": "grip.eval.cli:strips",
              "browse": "grip.browse:browse_cmd", "gallery": "grip.gallery:gallery_cmd", "audit": "grip.audit:audit_cmd"}

if __name__ == "__main__":
    main()
