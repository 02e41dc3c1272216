"""The domain registry: one explicit, ordered table from domain id to family and the `module:attribute` that holds
its `DOMAIN` record. Modules load lazily by name, so `grip list` imports none of them. Third-party packages add
domains through the entry-point group `grip.domains` (entry-point name = domain id, value = `module:DOMAIN`)."""
from __future__ import annotations

import importlib

# id -> (family, target). Order is the order of `grip list` and of the dataset card.
REGISTRY: dict[str, tuple[str, str]] = {
    "physical_stability": ("physical", "grip.domains.physical.physical_stability:DOMAIN"),
    "gear_trains": ("physical", "grip.domains.physical.gear_trains:DOMAIN"),
    "free_body_diagrams": ("physical", "grip.domains.physical.free_body_diagrams:DOMAIN"),
    "projectile_motion": ("physical", "grip.domains.physical.projectile_motion:DOMAIN"),
    "laser_mirrors": ("physical", "grip.domains.physical.laser_mirrors:DOMAIN"),
    "clock_reading": ("physical", "grip.domains.physical.clock_reading:DOMAIN"),
    "gauge_reading": ("physical", "grip.domains.physical.gauge_reading:DOMAIN"),
    "coordinate_geometry": ("analytic", "grip.domains.analytic.coordinate_geometry:DOMAIN"),
    "compass_bearings": ("analytic", "grip.domains.analytic.compass_bearings:DOMAIN"),
    "nested_squares": ("plane", "grip.domains.plane.nested_squares:DOMAIN"),
    "nested_triangles": ("plane", "grip.domains.plane.nested_triangles:DOMAIN"),
    "nested_hexagons": ("plane", "grip.domains.plane.nested_hexagons:DOMAIN"),
    "line_intersection": ("plane", "grip.domains.plane.line_intersection:DOMAIN"),
    "angle_estimation": ("plane", "grip.domains.plane.angle_estimation:DOMAIN"),
    "progressive_matrices": ("inductive", "grip.domains.inductive.progressive_matrices:DOMAIN"),
    "cube_nets": ("solid", "grip.domains.solid.cube_nets:DOMAIN"),
    "cube_structure": ("solid", "grip.domains.solid.cube_structure:DOMAIN"),
    "combination_3d": ("solid", "grip.domains.solid.combination_3d:DOMAIN"),
    "orthographic": ("solid", "grip.domains.solid.orthographic:DOMAIN"),
    "polyhedra": ("solid", "grip.domains.solid.polyhedra:DOMAIN"),
    "depth_height": ("solid", "grip.domains.solid.depth_height:DOMAIN"),
    "rotation_matching": ("transformational", "grip.domains.transformational.rotation_matching:DOMAIN"),
    "symmetry_patterns": ("transformational", "grip.domains.transformational.symmetry_patterns:DOMAIN"),
    "fold_punch": ("transformational", "grip.domains.transformational.fold_punch:DOMAIN"),
    "combination_2d": ("transformational", "grip.domains.transformational.combination_2d:DOMAIN"),
    "embedded_figures": ("transformational", "grip.domains.transformational.embedded_figures:DOMAIN"),
    "overlapping_circles": ("transformational", "grip.domains.transformational.overlapping_circles:DOMAIN"),
    "surface_topology": ("topological", "grip.domains.topological.surface_topology:DOMAIN"),
    "route_puzzles": ("topological", "grip.domains.topological.route_puzzles:DOMAIN"),
    "hex_pathfinding": ("topological", "grip.domains.topological.hex_pathfinding:DOMAIN"),
    "occluded_patterns": ("projective", "grip.domains.projective.occluded_patterns:DOMAIN"),
    "shadow_inference": ("projective", "grip.domains.projective.shadow_inference:DOMAIN"),
    "optical_illusions": ("optical", "grip.domains.optical.optical_illusions:DOMAIN"),
    "impossible_objects": ("optical", "grip.domains.optical.impossible_objects:DOMAIN"),
}

FAMILIES = ("plane", "solid", "transformational", "physical", "topological", "projective", "analytic", "optical",
            "inductive")

ENTRY_POINT_GROUP = "grip.domains"


class UnknownDomain(KeyError):
    def __init__(self, domain_id: str):
        super().__init__(domain_id)
        self.domain_id = domain_id

    def __str__(self) -> str:
        users = _helper_users(self.domain_id)
        if users:
            return (f"{self.domain_id!r} is a private helper module, not a domain (used by {', '.join(users)}); "
                    f"`grip list` shows the registered domains")
        return f"unknown domain {self.domain_id!r}; `grip list` shows the registered ones"


def _helper_users(name: str) -> list[str]:
    """The registered domains whose module imports the private helper module `name` (e.g. `_bars`)."""
    import re
    from pathlib import Path
    if not re.fullmatch(r"_[a-z0-9_]+", name or ""):
        return []
    here = Path(__file__).parent
    if not list(here.glob(f"*/{name}.py")):
        return []
    pattern = re.compile(rf"\b{name}\b")
    return [d for d, (_, target) in REGISTRY.items()
            if pattern.search((here.joinpath(*target.split(":")[0].split(".")[2:]).with_suffix(".py")).read_text())]


def _external() -> dict[str, str]:
    from importlib import metadata   # only when a third-party domain may be asked for (~40 ms of start-up)
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # a broken third-party install must not break the built-in registry
        return {}
    return {ep.name: ep.value for ep in eps if ep.name not in REGISTRY}


def ids() -> list[str]:
    return list(REGISTRY) + sorted(_external())


def family_of(domain_id: str) -> str:
    if domain_id in REGISTRY:
        return REGISTRY[domain_id][0]
    if domain_id in _external():
        return get(domain_id).family
    raise UnknownDomain(domain_id)


_CACHE: dict[str, object] = {}


def get(domain_id: str):
    """The `Domain` record for an id, importing its module on first use."""
    if domain_id in _CACHE:
        return _CACHE[domain_id]
    if domain_id in REGISTRY:
        target = REGISTRY[domain_id][1]
    else:
        target = _external().get(domain_id)
        if target is None:
            raise UnknownDomain(domain_id)
    module, _, attr = target.partition(":")
    dom = getattr(importlib.import_module(module), attr)
    if dom.id != domain_id:
        raise ValueError(f"registry entry {domain_id!r} loads a domain whose id is {dom.id!r}")
    _CACHE[domain_id] = dom
    return dom
