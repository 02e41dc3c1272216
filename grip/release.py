"""Release recipes (manifests/*.toml): which domains, how many items, base seed, level mix, grain levels and the
core subset, and the build of a whole release into one item store per domain.

    [release]
    name = "grip-v1"          # the release name (the card's title)
    seed = 0                  # base seed, 0..2**63-1: item seeds hash (seed, domain, index)
    n = 3000                  # items per domain (a domain table may override it), at most 10,000,000
    core = 20                 # the core subset: items with index < core (also the grain subset by default)
    level = "cycle"           # "cycle" = item i at level 1 + i mod 3; or a fixed level 1..3
    grain_sigmas = [15, 25, 40]
    license = "cc-by-4.0"

    [domains.gear_trains]     # one table per domain, in build order; each may set n, seed, level, grain_subset
"""
from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grip import GripError
from grip.manifest import MAX_ITEMS, MAX_SEED

RELEASE_KEYS = {"name", "seed", "n", "core", "level", "grain_sigmas", "grain_subset", "license", "description"}
DOMAIN_KEYS = {"n", "seed", "level", "grain_subset"}
REQUIRED = ("name", "seed")


class ManifestError(GripError):
    pass


@dataclass(frozen=True)
class DomainRecipe:
    domain: str
    n: int
    seed: int
    level: int | None       # None = the default mix (1 + i mod 3)
    grain_subset: int


@dataclass(frozen=True)
class Recipe:
    path: str
    sha256: str
    name: str
    core: int
    grain_sigmas: tuple[int, ...]
    license: str
    domains: tuple[DomainRecipe, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        return {"manifest": self.path, "manifest_sha256": self.sha256, "name": self.name, "core": self.core,
                "grain_sigmas": list(self.grain_sigmas), "license": self.license,
                "domains": {d.domain: {"n": d.n, "seed": d.seed, "level": d.level, "grain_subset": d.grain_subset}
                            for d in self.domains}}


def _int(where: str, key: str, v, low: int | None = None, high: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ManifestError(f"{where}: {key} must be a whole number, got {v!r}")
    if low is not None and v < low:
        raise ManifestError(f"{where}: {key} must be {'positive' if low == 1 else f'>= {low}'}, got {v}")
    if high is not None and v > high:
        raise ManifestError(f"{where}: {key} must be at most {high:,}, got {v:,}")
    return v


def _level(where: str, v) -> int | None:
    if v == "cycle":
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v not in (1, 2, 3):
        raise ManifestError(f"{where}: level must be \"cycle\" or one of 1, 2, 3, got {v!r}")
    return v


def load_recipe(path: Path) -> Recipe:
    """Parse and check a release manifest; every problem is one line naming the file and the key. A recipe grip
    ships may be named without its folder when no such file is here: `grip-v1`, `grip-v1.toml` or
    `manifests/grip-v1.toml` (as the README writes it) from any working folder."""
    from grip.domains import ids
    from grip.grain import SIGMAS
    path = Path(path)
    if not path.exists() and not path.is_absolute() and path.parts[:-1] in ((), ("manifests",)):
        path = shipped_manifest(path.name if path.suffix == ".toml" else f"{path.name}.toml") or path
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ManifestError(f"{path}: cannot read the manifest: {e.strerror or e}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: not valid TOML: {e}") from None
    unknown = set(data) - {"release", "domains"}
    if unknown:
        raise ManifestError(f"{path}: unknown tables or keys {sorted(unknown)} (expected [release] and [domains.*])")
    rel = data.get("release")
    if not isinstance(rel, dict):
        raise ManifestError(f"{path}: no [release] table")
    where = f"{path} [release]"
    bad = set(rel) - RELEASE_KEYS
    if bad:
        raise ManifestError(f"{where}: unknown keys {sorted(bad)}; allowed: {sorted(RELEASE_KEYS)}")
    missing = [k for k in REQUIRED if k not in rel]
    if missing:
        raise ManifestError(f"{where}: missing {', '.join(missing)}")
    name = rel["name"]
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{where}: name must be a non-empty string")
    seed = _int(where, "seed", rel["seed"], 0, MAX_SEED)
    core = _int(where, "core", rel.get("core", 20), 1)  # an empty core subset would leave the protocols nothing
    n_default = _int(where, "n", rel["n"], 1, MAX_ITEMS) if "n" in rel else None
    level = _level(where, rel.get("level", "cycle"))
    sig = rel.get("grain_sigmas", list(SIGMAS))
    if not isinstance(sig, list) or tuple(sig) != tuple(SIGMAS):
        raise ManifestError(f"{where}: grain_sigmas must be {list(SIGMAS)} (the levels this grip makes), got {sig!r}")
    grain_default = _int(where, "grain_subset", rel["grain_subset"], 0) if "grain_subset" in rel else core
    license = rel.get("license", "cc-by-4.0")
    if not isinstance(license, str) or not license:
        raise ManifestError(f"{where}: license must be a license id such as \"cc-by-4.0\"")
    doms = data.get("domains")
    if not isinstance(doms, dict) or not doms:
        raise ManifestError(f"{path}: no [domains.<id>] tables; name at least one domain")
    known = ids()
    recipes = []
    for d, spec in doms.items():
        w = f"{path} [domains.{d}]"
        if d not in known:
            raise ManifestError(f"{w}: unknown domain {d!r}; `grip list` shows the registered ones")
        if not isinstance(spec, dict):
            raise ManifestError(f"{w}: must be a table")
        bad = set(spec) - DOMAIN_KEYS
        if bad:
            raise ManifestError(f"{w}: unknown keys {sorted(bad)}; allowed: {sorted(DOMAIN_KEYS)}")
        if "n" not in spec and n_default is None:
            raise ManifestError(f"{w}: missing n (and [release] sets no default n)")
        n = _int(w, "n", spec.get("n", n_default), 1, MAX_ITEMS)
        if core > n:
            raise ManifestError(f"{w}: n = {n} is smaller than the core subset ({core})")
        recipes.append(DomainRecipe(d, n, _int(w, "seed", spec.get("seed", seed), 0, MAX_SEED),
                                    _level(w, spec["level"]) if "level" in spec else level,
                                    min(_int(w, "grain_subset", spec.get("grain_subset", grain_default), 0), n)))
    return Recipe(path.name, hashlib.sha256(raw).hexdigest(), name.strip(), core, tuple(SIGMAS), license,
                  tuple(recipes))


def shipped_manifest(name: str) -> Path | None:
    """A file of grip's `manifests/` folder (release recipes, E2 readability labels): `grip/manifests/` in an
    installed wheel, `manifests/` beside `grip/` in a source checkout; None when there is no such file."""
    pkg = Path(__file__).resolve().parent
    for folder in (pkg / "manifests", pkg.parent / "manifests"):
        if (folder / name).is_file():
            return folder / name
    return None


@dataclass
class ReleaseResult:
    out: Path
    recipe: Recipe
    results: list


def build_release(path: Path, out: Path, workers: int = 1, progress: bool = False, on_domain=None,
                  twins: bool = False, executor: str = "local", address: str | None = None,
                  on_start=None) -> ReleaseResult:
    """Build every domain of a recipe into `out/<domain>/` (resuming like `grip build`), then write
    `out/release.json` (the recipe as built; no times, so a rebuild writes the same bytes). `twins`, `executor`
    and `address` as for `grip build`; `on_start()` is called once the recipe and --out have passed their checks."""
    from grip.builder import build, check_writable
    from grip.executors import check_workers
    from grip.manifest import atomic_write_json
    recipe = load_recipe(path)
    check_workers(workers, executor)
    out = Path(out)
    check_writable(out)
    prior = out / "release.json"
    if prior.is_file():
        try:
            old = json.loads(prior.read_text())
        except ValueError:
            raise ManifestError(f"{prior}: not valid JSON; choose another --out") from None
        if old.get("domains") != recipe.to_json()["domains"]:
            raise ManifestError(f"{out} holds a release built from another recipe ({old.get('manifest')}); "
                                f"choose another --out")
    if on_start is not None:
        on_start()
    results = []
    session = None
    if executor == "ray":   # one Ray session for every domain (each build would otherwise start its own)
        from grip.executors import RayExecutor
        session = RayExecutor(workers, address)
        session.start()
    try:
        for d in recipe.domains:
            res = build(d.domain, d.n, out, seed=d.seed, level=d.level, workers=workers,
                        grain_subset=d.grain_subset, progress=progress, twins=twins, executor=executor,
                        address=address)
            results.append(res)
            if on_domain is not None:
                on_domain(res)
    finally:
        if session is not None:
            session.close()
    atomic_write_json(out / "release.json", recipe.to_json())
    return ReleaseResult(out, recipe, results)
