"""Polyhedra: one convex solid built on regular polygons (prism, pyramid, bipyramid, antiprism or frustum, n = 3..8
sides), turned by a random rotation Q and drawn in orthographic projection along -z (u = s x, v = -s y, so the
viewer sits at w = (0, 0, 1)). Visible faces carry a light tint, visible edges are solid, and at levels 1-2 hidden
edges are dashed; hidden corners are hollow dots at every level. Level 3 leaves the hidden edges out (the prompt
says so: they must be inferred from the symmetry of the regular polygons) and may tilt a pyramid's apex off-centre.
The hidden corners stay drawn at level 3: without them a triangular bipyramid showing one upper and one lower face
draws exactly the picture of a tetrahedron. For the same reason at least one face of every kind (a base, each kind
of side face) must face the viewer at level 3 (`kind_visibility`). The ladder
walks vertices -> kind of solid -> edges -> faces and triangles -> the solid with corners sliced off; the open
question counts the vertex pairs joined only through the inside.

Visibility (DOMAINS.md 0.8): a face is visible iff n . w > 0, an edge is hidden iff both of its faces face away, a
corner is hidden iff all of its faces face away. Ambiguity boundaries: a face seen nearly edge-on (|n . w| below
`FACING[level]`, stricter than the sheet's 0.08 at levels 1-2 so the slivers stay readable), two corners closer than
`VERTEX_GAP_PX` on screen (the sheet's 14 px, raised to 16 because corners carry 8 px dots), and a corner within
`CLEAR_PX` of an edge it does not belong to. Weak perspective at level 3 (a uniform scale of the orthographic view)
would draw the same picture, so level 3 is harder by its hidden back and oblique pyramids alone.

Q5's edit varies: either every corner or a single corner with the most edges is sliced off by a small flat cut;
slicing a set S of corners gives V' = V - |S| + sum deg, E' = E + sum deg, F' = F + |S| (every corner: 2E, 3E, F + V).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers import projection as pj
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, OKABE_ITO, TEXT
from grip.renderers.text import draw_text_px, text_size

FAMILIES = ("prism", "pyramid", "bipyramid", "antiprism", "frustum")
ALIASES = (("truncated pyramid", "frustum"), ("dipyramid", "bipyramid"), ("double pyramid", "bipyramid"))
N_MAX = {1: 5, 2: 8, 3: 8}
H_RATIO = (0.6, 1.6)                       # h / R
TOP_SCALE = (0.45, 0.75)                   # frustum's top ring / bottom ring
APEX_OFFSET_MAX = 0.3                      # oblique pyramid apex offset / R (level 3)
OCTAHEDRON_GAP = 0.15                      # square bipyramids keep |h/R - 1| >= this
FACING = {1: 0.15, 2: 0.12, 3: 0.10}       # smallest |n . w| of any face
VERTEX_GAP_PX = 16.0
CLEAR_PX = 8.0
TOP_PX = 64.0                              # caption strip
BOX = (SAFE_BORDER_PX + 16.0, TOP_PX + 12.0, 768.0 - SAFE_BORDER_PX - 16.0, 768.0 - SAFE_BORDER_PX - 16.0)
FILL_SCALE = 0.86                          # of the largest scale that fits: room for the n +- 1 twin
DOT_PX = 5.0
EVERY, ONE = "every", "one"
TINTS = ("sky", "orange", "green", "purple", "blue")
CAMERA = pj.OrthoCamera("TOP", (1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3: n limit, hidden parts drawn (1-2) or omitted (3)
    family: str                                  # one of FAMILIES
    n: int                                       # sides of the regular base, 3..8 (antiprism 4..8)
    height_ratio: float                          # h / R, 0.6..1.6
    top_scale: float                             # frustum's top ring / R, 0.45..0.75; 1.0 for other families
    apex_offset: tuple[float, float]             # pyramid apex offset / R (level 3, <= 0.3); (0, 0) otherwise
    rotation: tuple[tuple[float, float, float], ...]   # Q, a proper rotation (rows), body -> world
    scale_px: float                              # pixels per R
    origin_px: tuple[float, float]               # pixel image of the body origin
    tint: int                                    # index into TINTS
    cut: str                                     # Q5: EVERY corner or ONE corner with the most edges
    sliced: str = ""                             # "" for the drawn solid; EVERY or ONE after the Q5 edit


# --- the solid (pure) --------------------------------------------------------------------------------------------

def n_range(family: str, level: int) -> tuple[int, int]:
    return (4 if family == "antiprism" else 3), N_MAX[level]


@lru_cache(maxsize=64)
def body_faces(family: str, n: int) -> tuple[tuple[int, ...], ...]:
    """Face vertex lists (any orientation). Rings: bottom 0..n-1, top n..2n-1 (or the apex n, the lower apex n+1)."""
    ring = [(k, (k + 1) % n) for k in range(n)]
    if family in ("prism", "frustum"):
        return (tuple(range(n)), tuple(range(n, 2 * n))) + tuple((a, b, n + b, n + a) for a, b in ring)
    if family == "antiprism":
        return ((tuple(range(n)), tuple(range(n, 2 * n))) + tuple((a, b, n + a) for a, b in ring)
                + tuple((b, n + b, n + a) for a, b in ring))
    if family == "pyramid":
        return (tuple(range(n)),) + tuple((a, b, n) for a, b in ring)
    if family == "bipyramid":
        return tuple((a, b, n) for a, b in ring) + tuple((a, b, n + 1) for a, b in ring)
    raise ValueError(f"polyhedra: unknown family {family!r}")


def body_vertices(scene: Scene) -> np.ndarray:
    """Vertices in the body frame (R = 1), centred on the middle of the axis."""
    return _body(scene.family, scene.n, scene.height_ratio, scene.top_scale, scene.apex_offset)[0]


def body_normals(scene: Scene) -> np.ndarray:
    """Outward unit face normals in the body frame, in `body_faces` order."""
    return _body(scene.family, scene.n, scene.height_ratio, scene.top_scale, scene.apex_offset)[1]


def oriented_faces(scene: Scene) -> tuple[tuple[int, ...], ...]:
    """`body_faces`, each counter-clockwise seen from outside."""
    return _body(scene.family, scene.n, scene.height_ratio, scene.top_scale, scene.apex_offset)[2]


@lru_cache(maxsize=256)    # the sampler tries many rotations of one shape
def _body(family: str, n: int, h: float, top_scale: float, apex_offset):
    v = _body_vertices(family, n, h, top_scale, apex_offset)
    raw = body_faces(family, n)
    # Faces are planar: the normal of the first three corners, turned away from the centroid (the solid is convex).
    a, b, c = (v[[f[k] for f in raw]] for k in range(3))
    m = np.cross(b - a, c - a)
    m /= np.linalg.norm(m, axis=1)[:, None]
    out = np.einsum("fk,fk->f", m, np.array([v[list(f)].mean(axis=0) for f in raw]) - v.mean(axis=0)) > 0
    normals = np.where(out[:, None], m, -m)
    faces = [tuple(f) if o else tuple(reversed(f)) for f, o in zip(raw, out)]
    v.setflags(write=False)
    normals.setflags(write=False)
    return v, normals, tuple(faces)


def _body_vertices(family: str, n: int, h: float, top_scale: float, apex_offset) -> np.ndarray:
    t = 2 * math.pi * np.arange(n) / n
    ring = np.column_stack([np.cos(t), np.sin(t)])
    if family in ("prism", "frustum", "antiprism"):
        k = top_scale
        t2 = t + (math.pi / n if family == "antiprism" else 0.0)
        top = k * np.column_stack([np.cos(t2), np.sin(t2)])
        return np.vstack([np.column_stack([ring, np.full(n, -h / 2)]), np.column_stack([top, np.full(n, h / 2)])])
    if family == "pyramid":
        ox, oy = apex_offset
        return np.vstack([np.column_stack([ring, np.full(n, -h / 2)]), [[ox, oy, h / 2]]])
    return np.vstack([np.column_stack([ring, np.zeros(n)]), [[0.0, 0.0, h]], [[0.0, 0.0, -h]]])


def edges(scene: Scene) -> tuple[tuple[int, int], ...]:
    return _edges(scene.family, scene.n)


@lru_cache(maxsize=64)
def _edges(family: str, n: int) -> tuple[tuple[int, int], ...]:
    return tuple(sorted({(min(a, b), max(a, b)) for f in body_faces(family, n) for a, b in zip(f, f[1:] + f[:1])}))


@lru_cache(maxsize=64)
def _edge_faces(family: str, n: int) -> tuple[tuple[int, ...], ...]:
    """Per edge (in `edges` order), the faces it bounds."""
    faces = body_faces(family, n)
    return tuple(tuple(k for k, f in enumerate(faces) if a in f and b in f) for a, b in _edges(family, n))


def degrees(scene: Scene) -> list[int]:
    return list(_degrees(scene.family, scene.n))


@lru_cache(maxsize=64)
def _degrees(family: str, n: int) -> tuple[int, ...]:
    es = _edges(family, n)
    d = [0] * (1 + max(max(e) for e in es))
    for a, b in es:
        d[a] += 1
        d[b] += 1
    return tuple(d)


def sliced_corners(scene: Scene) -> tuple[int, ...]:
    """Corners the slicing removes: all, one of highest degree (the first in index order), or none."""
    if scene.sliced == EVERY:
        return tuple(range(len(degrees(scene))))
    if scene.sliced == ONE:
        d = degrees(scene)
        return (d.index(max(d)),)
    return ()


def counts(scene: Scene) -> tuple[int, int, int]:
    """(V, E, F) of the solid, after the slicing if any: each sliced corner of degree d leaves d new corners and d
    new edges round one new face."""
    faces = body_faces(scene.family, scene.n)
    d = degrees(scene)
    cut = sliced_corners(scene)
    extra = sum(d[i] for i in cut)
    return len(d) - len(cut) + extra, len(edges(scene)) + extra, len(faces) + len(cut)


def triangle_count(scene: Scene) -> int:
    return sum(len(f) == 3 for f in body_faces(scene.family, scene.n))


def hidden_diagonals(scene: Scene) -> int:
    """Vertex pairs on no common face: C(V, 2) - E - sum over faces of k(k - 3)/2."""
    v, e, _ = counts(replace(scene, sliced=""))
    return v * (v - 1) // 2 - e - sum(len(f) * (len(f) - 3) // 2 for f in body_faces(scene.family, scene.n))


# --- the view -------------------------------------------------------------------------------------------------

def world_vertices(scene: Scene) -> np.ndarray:
    return body_vertices(scene) @ np.asarray(scene.rotation, dtype=float).T


@lru_cache(maxsize=128)
def view(scene: Scene) -> pj.PolyView:
    """Visibility by the rules of `pj.polyhedron_view` (which the tests compare), from the cached body normals."""
    q = np.asarray(scene.rotation, dtype=float)
    normals = body_normals(scene) @ q.T
    facing = normals[:, 2]
    faces = oriented_faces(scene)
    seen = [k for k in range(len(faces)) if facing[k] > 0]
    visible, hidden = [], []
    for e, fs in zip(edges(scene), _edge_faces(scene.family, scene.n)):
        (hidden if all(facing[k] <= 0 for k in fs) else visible).append(e)
    return pj.PolyView(world_vertices(scene), faces, normals, facing, tuple(seen), tuple(visible), tuple(hidden))


@lru_cache(maxsize=128)     # the view checks, the margins and the renderer all start here
def pixels(scene: Scene) -> np.ndarray:
    p = CAMERA.project(world_vertices(scene), scene.scale_px, scene.origin_px)
    p.setflags(write=False)
    return p


def hidden_vertices(scene: Scene) -> tuple[int, ...]:
    v = view(scene)
    front = {i for fi in v.visible_faces for i in v.faces[fi]}
    return tuple(i for i in range(len(v.vertices)) if i not in front)


def vertex_gap_px(scene: Scene) -> float:
    p = pixels(scene)
    d = np.linalg.norm(p[:, None, :] - p[None, :, :], axis=2)
    return float(d[np.triu_indices(len(p), 1)].min())


def edge_clearance_px(scene: Scene) -> float:
    """Smallest distance from a projected corner to a projected edge it does not belong to."""
    p, es = pixels(scene), np.array(edges(scene))
    a, b = p[es[:, 0]], p[es[:, 1]]
    ab = b - a
    t = np.clip(np.einsum("vek,ek->ve", p[:, None, :] - a[None], ab) / np.einsum("ek,ek->e", ab, ab), 0, 1)
    d = np.linalg.norm(p[:, None, :] - (a[None] + t[..., None] * ab[None]), axis=2)
    own = (np.arange(len(p))[:, None] == es[None, :, 0]) | (np.arange(len(p))[:, None] == es[None, :, 1])
    return float(d[~own].min())


def inside_box(scene: Scene) -> bool:
    p = pixels(scene)
    return bool(p[:, 0].min() >= BOX[0] and p[:, 1].min() >= BOX[1] and p[:, 0].max() <= BOX[2]
                and p[:, 1].max() <= BOX[3])


def face_kinds(family: str, n: int) -> tuple[tuple[int, ...], ...]:
    """Faces grouped by kind (indices into `body_faces`): the bases, and each kind of side face."""
    if family in ("prism", "frustum"):
        return ((0, 1), tuple(range(2, n + 2)))
    if family == "antiprism":
        return ((0, 1), tuple(range(2, n + 2)), tuple(range(n + 2, 2 * n + 2)))
    if family == "pyramid":
        return ((0,), tuple(range(1, n + 1)))
    return (tuple(range(n)), tuple(range(n, 2 * n)))


def kind_visibility(scene: Scene) -> float:
    """min over face kinds of the best n . w in that kind: with the back omitted (level 3) at least one face of
    every kind must face the viewer, or a pyramid seen from below (only its base) would pass for a prism."""
    facing = facing_of(scene)
    return float(min(max(facing[i] for i in kind) for kind in face_kinds(scene.family, scene.n)))


def facing_of(scene: Scene) -> np.ndarray:
    """n . w per face: the z component of each rotated body normal (the same numbers `view` finds)."""
    return body_normals(scene) @ np.asarray(scene.rotation, dtype=float)[2]


def view_ok(scene: Scene) -> bool:
    return (float(np.abs(facing_of(scene)).min()) >= FACING[scene.level]
            and (scene.level < 3 or kind_visibility(scene) >= FACING[3])
            and inside_box(scene) and vertex_gap_px(scene) >= VERTEX_GAP_PX and edge_clearance_px(scene) >= CLEAR_PX)


# --- sampling -------------------------------------------------------------------------------------------------

def _shape_ok(family: str, n: int, h: float) -> bool:
    return not (family == "bipyramid" and n == 4 and abs(h - 1.0) < OCTAHEDRON_GAP)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"polyhedra: level must be 1..3, got {level}")
    family = FAMILIES[int(rng.integers(len(FAMILIES)))]         # targets first: family, then n, uniform
    lo, hi = n_range(family, level)
    n = int(rng.integers(lo, hi + 1))
    h = float(rng.uniform(*H_RATIO))
    while not _shape_ok(family, n, h):
        h = float(rng.uniform(*H_RATIO))
    top = float(rng.uniform(*TOP_SCALE)) if family == "frustum" else 1.0
    offset = (0.0, 0.0)
    if family == "pyramid" and level == 3:
        r, a = APEX_OFFSET_MAX * math.sqrt(float(rng.random())), float(rng.uniform(0, 2 * math.pi))
        offset = (r * math.cos(a), r * math.sin(a))
    tint, cut = int(rng.integers(len(TINTS))), (EVERY, ONE)[int(rng.integers(2))]
    base = Scene(level, family, n, h, top, offset, ((1.0, 0.0, 0.0),) * 3, 1.0, (0.0, 0.0), tint, cut)
    normals = body_normals(base)
    for _ in range(80):      # the view is a nuisance: redraw it until it is legible, keeping the targets
        q = pj.random_rotation(rng)
        if float(np.abs(normals @ q[2]).min()) < FACING[level]:
            continue         # the cheap test first: a face seen edge-on
        rot = tuple(tuple(float(x) for x in row) for row in q)
        pts = body_vertices(base) @ q.T
        s, origin = pj.fit(CAMERA, pts, BOX)
        s *= FILL_SCALE
        _, origin = pj.fit(CAMERA, pts, BOX, s=s)
        scene = replace(base, rotation=rot, scale_px=float(s), origin_px=(float(origin[0]), float(origin[1])))
        if view_ok(scene):
            return scene
    raise Reject("no_legible_view")


# --- answers --------------------------------------------------------------------------------------------------

def vertex_count(scene: Scene) -> Count:
    return Count(counts(scene)[0], low=4, high=16)


def solid_kind(scene: Scene) -> Choice:
    return Choice(scene.family, FAMILIES, ALIASES)


def edge_count(scene: Scene) -> Count:
    return Count(counts(scene)[1], low=6, high=32)


def faces_and_triangles(scene: Scene) -> Record:
    return Record((("faces", Count(counts(scene)[2], low=4, high=18)),
                   ("triangular_faces", Count(triangle_count(scene), low=0, high=16))))


def edit(scene: Scene) -> Scene:
    """Slice off every corner, or one corner with the most edges, by a small flat cut."""
    return replace(scene, sliced=scene.cut)


def sliced_counts(scene: Scene) -> Record:
    v, e, f = counts(scene)
    return Record((("vertices", Count(v, low=4, high=64)), ("edges", Count(e, low=6, high=96)),
                   ("faces", Count(f, low=4, high=34))))


counterfactual = sliced_counts


def inner_pairs(scene: Scene) -> Record:
    return Record((("pairs", Count(hidden_diagonals(scene), low=0, high=48)),))


# --- ladder -----------------------------------------------------------------------------------------------------

def _context(scene: Scene) -> str:
    base = ("The picture shows one convex solid in parallel projection, built on regular polygons (every base "
            "face, or the ring of corners round the middle, is a regular polygon). ")
    if scene.level < 3:
        return base + "Solid lines are visible edges, dashed lines are hidden edges; hollow dots are hidden corners. "
    return base + ("Hollow dots are hidden corners; hidden edges are not drawn: work out the back of the solid from "
                   "the symmetry of its regular polygons. ")


@lru_cache(maxsize=256)       # generate and rephrase_q4 each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    lv, c = scene.level, _context(scene)
    gap = Margin(vertex_gap_px(scene), "px", VERTEX_GAP_PX, "two corners close enough on screen to merge")
    clear = Margin(edge_clearance_px(scene), "px", CLEAR_PX, "a corner touching an edge it does not belong to")
    facing = Margin(view(scene).facing_margin, "cos", FACING[lv], "a face seen edge-on (n . w = 0)")
    kinds = facing if lv < 3 else Margin(kind_visibility(scene), "cos", FACING[3],
                                         "every face of one kind turned away from the viewer")
    one = "one corner at which the greatest number of edges meet (just that one corner)"
    what = "every corner" if scene.cut == EVERY else one
    rungs = (
        Question(1, "vertex_count", c + "How many vertices (corners) does the solid have, including hidden ones?",
                 vertex_count(scene), gap),
        Question(2, "solid_kind", c + "What kind of solid is this?", solid_kind(scene), kinds),
        Question(3, "edge_count", c + "How many edges does the solid have, including hidden ones?",
                 edge_count(scene), clear),
        Question(4, "faces_and_triangles", c + "How many faces does the solid have, and how many of them are "
                 "triangles?", faces_and_triangles(scene), facing),
        Question(5, "sliced_counts", c + f"Suppose {what} were sliced off by a small flat cut, so that each cut "
                 "leaves a new small face. How many vertices, edges and faces would the new solid have?",
                 counterfactual(edit(scene)), clear, edit=f"slice off {what}"),
    )
    open_q = Question(6, "inner_pairs", c + "How many pairs of vertices do not lie on a common face? (Each such "
                      "pair is joined by a diagonal through the inside of the solid.) Explain how you counted.",
                      inner_pairs(scene), gap)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words with Q4's fields (identity). The sheet's "how many are not triangles" would need a
    per-field complement to a total that varies with the scene, which no rephrase map expresses."""
    q4 = ladder(scene).rungs[3]
    return Question(4, "face_total_and_three_sided", _context(scene) + "Count the faces of the solid: how many are "
                    "there altogether, and how many of them have exactly three sides?", q4.answer, q4.margin)


def minimal_pair(scene: Scene) -> Scene:
    """n -> n + 1 (else n - 1) at the same size, rotation, position and tint, within the level's range."""
    lo, hi = n_range(scene.family, scene.level)
    for m in (scene.n + 1, scene.n - 1):
        if lo <= m <= hi and _shape_ok(scene.family, m, scene.height_ratio):
            twin = replace(scene, n=m)
            if view_ok(twin):
                return twin
    raise Reject("no_minimal_pair")


# --- drawing ------------------------------------------------------------------------------------------------------

def draw(scene: Scene, canvas: Canvas) -> None:
    if not inside_box(scene):
        raise Reject("solid_clipped")
    ctx, v, p = canvas.ctx, view(scene), pixels(scene).tolist()
    tint = OKABE_ITO[TINTS[scene.tint]]
    ctx.save()
    ctx.set_line_join(1)
    ctx.set_line_cap(1)
    for fi in v.visible_faces:      # faces of a convex solid seen from one side never overlap on screen
        f = v.faces[fi]
        ctx.move_to(*p[f[0]])
        for i in f[1:]:
            ctx.line_to(*p[i])
        ctx.close_path()
        ctx.set_source_rgba(*tint, 0.15)
        ctx.fill()
    if scene.level < 3:
        ctx.set_source_rgb(*BLACK)
        ctx.set_line_width(2.0)
        ctx.set_dash([7.0, 5.0])
        for a, b in v.hidden_edges:
            ctx.move_to(*p[a])
            ctx.line_to(*p[b])
            ctx.stroke()
        ctx.set_dash([])
    ctx.set_source_rgb(*BLACK)
    ctx.set_line_width(3.0)
    for a, b in v.visible_edges:
        ctx.move_to(*p[a])
        ctx.line_to(*p[b])
        ctx.stroke()
    hidden = set(hidden_vertices(scene))
    ctx.set_line_width(2.0)
    for i, (u, w) in enumerate(p):
        ctx.new_sub_path()
        ctx.arc(u, w, DOT_PX, 0, 2 * math.pi)
        if i in hidden:
            ctx.set_source_rgb(1, 1, 1)
            ctx.fill_preserve()
            ctx.set_source_rgb(*BLACK)
            ctx.stroke()
        else:
            ctx.set_source_rgb(*BLACK)
            ctx.fill()
    ctx.restore()
    line = ("Dashed lines: hidden edges. Hollow dots: hidden corners." if scene.level < 3
            else "Hollow dots: hidden corners. Hidden edges are not drawn.")
    w, _ = text_size(canvas, line, TEXT)
    draw_text_px(canvas, line, (SAFE_BORDER_PX + 4 + w / 2, SAFE_BORDER_PX + 14), TEXT)


DOMAIN = Domain(
    id="polyhedra", family="solid", title="Polyhedra",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, minimal_pair_keeps_q1=False, rephrase_q4=rephrase_q4, rephrase_map="identity",
    version=2,
    description="A convex prism, pyramid, bipyramid, antiprism or frustum on regular polygons, hidden edges dashed "
                "(omitted at level 3): vertices, kind, edges, faces and triangles, and the counts after slicing "
                "corners off.",
    balance_keys=("vertex_count", "solid_kind", "edge_count", "faces_and_triangles", "sliced_counts",
                  "inner_pairs"),
)
