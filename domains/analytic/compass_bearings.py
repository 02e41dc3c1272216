"""Compass bearings: a map with 4-6 named landmarks, a north arrow turned nu degrees clockwise from page-up and a
scale bar. The ladder walks nearest landmark to the Station -> the Lake's compass point -> its bearing -> where a
stated walk from the Station ends -> the Lake's compass point once the north arrow is turned by a stated angle; the
open question asks for the Station-Lake distance read with the scale bar.

Everything lives in page pixels (y down). The bearing of Q from P is the angle clockwise from map north:
beta = (atan2(dx, -dy) - nu) mod 360. A walk leg of d km on bearing theta moves by d * px_per_km along the page
direction (sin(theta + nu), -cos(theta + nu)); a leg given as a back bearing b ("the point where this leg began lies
on bearing b from her") travels on b + 180.

Ambiguity boundaries (DOMAINS.md 7.2): the 8-point sector edges at 22.5 + 45k degrees (Q2, and Q5 on the turned
arrow); a near tie between the two landmarks nearest the Station (Q1) or nearest the walk's end (Q4); a Lake so close
to the Station that its bearing or distance cannot be read. Q5 edits the scene (the arrow turned by `turn_deg`,
clockwise positive) and re-runs the Q2 answer function, so its answer is the Lake's sector of beta - turn_deg.

Version 2: Q5's turn was a fixed 90 degrees, so Q5 was a lookup of Q2 (two points anticlockwise). The turn is now
part of the scene and stated in Q5: 45..180 degrees in 15-degree steps, either way, keeping the turned bearing off
the sector edges; turns off the 45-degree grid make Q5 need the bearing (Q3), not just Q2's point. Landmarks now
spread over the map (bounding box >= `SPREAD_MIN` of the area each way) and icons are larger.

Minimal pair (not the sheet's): shifting a landmark 30-50 px toward the walk's end almost never makes it the nearest
(walks end ~20 px from their landmark, the runner-up 100-500 px away: 1 of 84 maps allowed it even at 200 px).
Instead the walk's landmark trades places with another: positions, and so Q1-Q3 and Q5 and every margin, stay; Q4
changes. Q1 is kept except where the walk ends at Q1's own landmark (a quarter of items, hence
`minimal_pair_keeps_q1=False`). Swaps whose box passes the sheet's 25% of the canvas (0.7) are skipped; a map with
no such swap rejects (about 4 maps in 10).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import shapely

from grip.answers import Choice, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers.canvas import Canvas
from grip.renderers.shapes import arrow, circle, line, polygon, rect
from grip.renderers.style import BLACK, GREY, GREY_DARK, LABEL, OKABE_ITO, TEXT, THIN, Style, tint
from grip.renderers.text import draw_text, draw_text_px, text_size

NAMES = ("Station", "Lake", "Tower", "Mill", "Hill", "Farm")
OTHERS = NAMES[1:]                       # every landmark a question may name as an answer
POINTS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_WORDS = {"N": "north", "E": "east", "S": "south", "W": "west"}
POINT_ALIASES = tuple((sep.join(_WORDS[c] for c in p), p) for p in POINTS for sep in ("", "-", " ")[:len(p) * 3 - 2])

SECTOR_GAP_DEG = 5.0          # Q2, Q5: beta at least this far from 22.5 + 45k
NEAREST_RATIO = {1: 1.3, 2: 1.2, 3: 1.15}   # Q1: second-nearest / nearest distance from the Station, per level
WALK_RATIO = 1.25             # Q4: second-nearest / nearest distance from the walk's end
WALK_NEAR_KM = 1.0            # Q4: the walk ends within 1 km of its nearest landmark
LAKE_MIN_PX = 120.0           # Q3: the Station-Lake segment is long enough to measure its direction
LAKE_MIN_KM = 1.0             # open: at least one scale unit, so 5% is a readable fraction of it
SEPARATION_PX = 110.0         # landmarks at least this far apart (sheet: 80), room for icons and their names
SPREAD_MIN = 0.6              # landmarks' bounding box spans this fraction of AREA in x and in y
TURNS_DEG = tuple(range(45, 181, 15))   # Q5: size of the north arrow's turn (either way; 180 has no sense)
BEARING_TOL = 4.0
DISTANCE_TOL = 0.05
MAP = (36.0, 36.0, 732.0, 732.0)          # map frame, px
AREA = (84.0, 84.0, 684.0, 684.0)         # where landmarks and walk points may lie
NORTH_C = (648.0, 120.0)                  # north-arrow rose centre
NORTH_R = 44.0
NORTH_KEEP_PX = 100.0                     # landmarks and walk points stay this far from the rose centre
BAR_X, BAR_Y = 64.0, 704.0                # scale bar: left end and baseline
BAR_KM = 2
SAMPLE_TRIES = 80
PAIR_BOX_MAX = 0.25                       # DOMAINS.md 0.7: the minimal pair's changed box, share of the canvas
PAIR_PAD_PX = (80.0, 36.0)                # around a swapped icon's point: the icon and its name, either side

ICON_SCALE = 1.3                          # icons drawn 1.3x their 44 px design size
ICON_HALF = 22.0 * ICON_SCALE             # every icon fits in a square of this half-side around its point
ICON_COLOURS = {"Station": GREY_DARK, "Lake": OKABE_ITO["sky"], "Tower": OKABE_ITO["purple"],
                "Mill": OKABE_ITO["orange"], "Hill": OKABE_ITO["green"], "Farm": OKABE_ITO["vermillion"]}


@dataclass(frozen=True)
class Scene:
    level: int                                  # 1..3
    north_deg: int                              # nu: north arrow clockwise from page-up (0 at L1; 10..60 in size)
    px_per_km: float                            # map scale (the scale bar shows 0-2 km)
    names: tuple[str, ...]                      # landmark names, Station first, then Lake
    positions: tuple[tuple[float, float], ...]  # landmark centres in page px (y down), same order as names
    legs: tuple[tuple[float, int, bool], ...]   # walk legs (km, stated bearing deg, stated as a back bearing)
    turn_deg: int = 90                          # Q5: the north arrow turned this much, clockwise positive, 45..180


# --- geometry -----------------------------------------------------------------------------------------------------

def bearing(scene: Scene, p, q) -> float:
    """Bearing of q from p, degrees clockwise from map north, in [0, 360)."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    return (math.degrees(math.atan2(dx, -dy)) - scene.north_deg) % 360.0


def step(scene: Scene, p, km: float, travel_deg: float) -> tuple[float, float]:
    a = math.radians(travel_deg + scene.north_deg)
    d = km * scene.px_per_km
    return (p[0] + d * math.sin(a), p[1] - d * math.cos(a))


def travel_bearing(leg: tuple[float, int, bool]) -> float:
    km, stated, back = leg
    return (stated + 180.0) % 360.0 if back else float(stated)


def walk_points(scene: Scene) -> list[tuple[float, float]]:
    """The Station, then the end of every leg."""
    pts = [scene.positions[0]]
    for leg in scene.legs:
        pts.append(step(scene, pts[-1], leg[0], travel_bearing(leg)))
    return pts


def position(scene: Scene, name: str) -> tuple[float, float]:
    return scene.positions[scene.names.index(name)]


def _ranked(scene: Scene, point, exclude: str = "Station") -> list[tuple[float, str]]:
    """(distance px, name) of every landmark but `exclude`, nearest first."""
    return sorted((math.dist(point, p), n) for n, p in zip(scene.names, scene.positions) if n != exclude)


def sector_index(beta: float) -> int:
    return int(((beta + 22.5) % 360.0) // 45.0)


def sector_gap(beta: float) -> float:
    """Degrees from beta to the nearest 8-point sector edge (22.5 + 45k)."""
    r = (beta - 22.5) % 45.0
    return min(r, 45.0 - r)


def lake_bearing(scene: Scene) -> float:
    return bearing(scene, position(scene, "Station"), position(scene, "Lake"))


def lake_km(scene: Scene) -> float:
    return math.dist(position(scene, "Station"), position(scene, "Lake")) / scene.px_per_km


def _landmark_options(scene: Scene) -> tuple[str, ...]:
    return tuple(sorted(n for n in scene.names if n != "Station"))


# --- answers ------------------------------------------------------------------------------------------------------

def nearest_to_station(scene: Scene) -> Choice:
    return Choice(_ranked(scene, position(scene, "Station"))[0][1], _landmark_options(scene))


def lake_direction(scene: Scene) -> Choice:
    return Choice(POINTS[sector_index(lake_bearing(scene))], POINTS, aliases=POINT_ALIASES)


def lake_bearing_answer(scene: Scene) -> Number:
    # rounded first, then wrapped: 359.96 is written 0.0, never 360.0 (outside [0, 360))
    return Number(round(lake_bearing(scene), 1) % 360.0, BEARING_TOL, "degrees", decimals=0, period=360.0, low=0.0,
                  high=360.0)


def walk_end(scene: Scene) -> Choice:
    return Choice(_ranked(scene, walk_points(scene)[-1])[0][1], _landmark_options(scene))


def lake_distance(scene: Scene) -> Record:
    return Record((("distance", Number(round(lake_km(scene), 3), DISTANCE_TOL, "km", decimals=1, tol_kind="rel",
                                       low=0.0)),))


def edit(scene: Scene) -> Scene:
    """Q5's edit: the north arrow turned `turn_deg` (clockwise positive); the landmarks stay where they are."""
    return replace(scene, north_deg=scene.north_deg + scene.turn_deg)


def turn_words(turn_deg: int) -> str:
    if abs(turn_deg) == 180:
        return "180° (half a turn)"
    return f"{abs(turn_deg)}° {'clockwise' if turn_deg > 0 else 'anticlockwise'}"


def counterfactual(scene: Scene) -> Choice:
    return lake_direction(scene)


def _ratio(ranked: list[tuple[float, str]]) -> float:
    return ranked[1][0] / max(ranked[0][0], 1e-9)


def _leg_text(leg: tuple[float, int, bool], first: bool) -> str:
    km, stated, back = leg
    verb = "walks" if first else "then"
    if back:
        return f"{verb} {km:.1f} km so that the point where this leg began lies on bearing {stated:03d}° from her"
    return f"{verb} {km:.1f} km on bearing {stated:03d}°"


def walk_text(scene: Scene) -> str:
    return ", ".join(_leg_text(leg, i == 0) for i, leg in enumerate(scene.legs))


def ladder(scene: Scene) -> Ladder:
    station = position(scene, "Station")
    beta = lake_bearing(scene)
    lake_px = math.dist(station, position(scene, "Lake"))
    end_rank = _ranked(scene, walk_points(scene)[-1])
    q1 = Question(1, "nearest_to_station", "Which landmark is closest to the Station?", nearest_to_station(scene),
                  Margin(_ratio(_ranked(scene, station)), "ratio", NEAREST_RATIO[scene.level],
                         "two landmarks equally close to the Station"))
    q2 = Question(2, "lake_direction", "In which compass direction is the Lake from the Station? Use the north "
                  "arrow.", lake_direction(scene),
                  Margin(sector_gap(beta), "deg", SECTOR_GAP_DEG, "bearing on a compass-point sector edge"))
    q3 = Question(3, "lake_bearing", "What is the bearing of the Lake from the Station, in degrees clockwise from "
                  "north (000 to 359)?", lake_bearing_answer(scene),
                  Margin(lake_px, "px", LAKE_MIN_PX, "Lake too close to the Station to measure a direction"))
    q4 = Question(4, "walk_end", f"A walker leaves the Station and {walk_text(scene)}. Which landmark other than "
                  "the Station is she nearest to when she stops?", walk_end(scene),
                  Margin(_ratio(end_rank), "ratio", WALK_RATIO, "two landmarks equally close to the walk's end"))
    turned = edit(scene)
    words = turn_words(scene.turn_deg)
    q5 = Question(5, "lake_direction_turned", f"Suppose the north arrow were turned {words} about its centre, "
                  "while the map and its landmarks stay where they are. In which compass direction would the Lake "
                  "then be from the Station?", counterfactual(turned),
                  Margin(sector_gap(lake_bearing(turned)), "deg", SECTOR_GAP_DEG,
                         "turned bearing on a compass-point sector edge"),
                  edit=f"north arrow turned {words}")
    open_q = Question(6, "lake_distance", "Explain, using the scale bar, how far the Lake is from the Station "
                      "(centre to centre of the two symbols).", lake_distance(scene),
                      Margin(lake_km(scene), "km", LAKE_MIN_KM, "Lake within one scale unit of the Station"))
    return Ladder((q1, q2, q3, q4, q5), open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked as a straight-line distance (map: identity)."""
    return Question(4, "walk_end_closest", f"A walker leaves the Station and {walk_text(scene)}. When she stops, "
                    "which landmark other than the Station lies the shortest straight-line distance away from her?",
                    walk_end(scene), Margin(_ratio(_ranked(scene, walk_points(scene)[-1])), "ratio", WALK_RATIO,
                                            "two landmarks equally close to the walk's end"))


def minimal_pair(scene: Scene) -> Scene:
    """The landmark the walk ends at trades places with another landmark (icons and names swap; every position
    stays), the nearest to the walk's end first, such that every margin holds and Q1 keeps its answer unless the
    walk ends at Q1's landmark (then no swap can keep it)."""
    end = walk_points(scene)[-1]
    q1, q4 = nearest_to_station(scene).value, walk_end(scene).value
    for _, other in _ranked(scene, end)[1:]:
        a, b = np.array(position(scene, q4)), np.array(position(scene, other))
        if other == q1 or np.prod(np.abs(a - b) + 2 * np.array(PAIR_PAD_PX)) > PAIR_BOX_MAX * 768 ** 2:
            continue
        swap = {q4: other, other: q4}
        twin = replace(scene, names=tuple(swap.get(n, n) for n in scene.names))
        try:
            draw(twin, Canvas(768))   # its labels must still find room
        except Reject:
            continue
        if not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


# --- sampling -----------------------------------------------------------------------------------------------------

def _in_area(p, pad: float = 0.0) -> bool:
    x0, y0, x1, y1 = AREA
    return (x0 + pad <= p[0] <= x1 - pad and y0 + pad <= p[1] <= y1 - pad
            and math.dist(p, NORTH_C) >= NORTH_KEEP_PX and not _in_bar_zone(p))


def _in_bar_zone(p) -> bool:
    return p[0] <= BAR_X + 2 * 100.0 + 60.0 and p[1] >= BAR_Y - 64.0


def _uniform_point(d: Draws) -> tuple[float, float]:
    x0, y0, x1, y1 = AREA
    return (round(d.uniform(x0, x1), 1), round(d.uniform(y0, y1), 1))


def _free(p, placed, sep: float = SEPARATION_PX) -> bool:
    return _in_area(p) and all(math.dist(p, q) >= sep for q in placed)


def _legs_through(scene: Scene, d: Draws, end, n_legs: int, level: int):
    """Legs from the Station to (near) `end` through random waypoints on the map, stated to 0.1 km and 1 degree."""
    pts = [scene.positions[0]]
    for _ in range(n_legs - 1):
        for _ in range(50):
            w = _uniform_point(d)
            if _in_area(w) and math.dist(w, pts[-1]) >= 1.2 * scene.px_per_km and \
                    math.dist(w, end) >= 1.2 * scene.px_per_km:
                break
        else:
            return None
        pts.append(w)
    pts.append(end)
    legs, at = [], pts[0]
    for target in pts[1:]:
        km = round(math.dist(at, target) / scene.px_per_km, 1)
        if km < 0.8:
            return None
        travel = int(round(bearing(scene, at, target))) % 360
        back = level == 3 and d.random() < 0.4
        leg = (km, (travel + 180) % 360 if back else travel, back)
        legs.append(leg)
        at = step(scene, at, km, travel_bearing(leg))
    return tuple(legs)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Target first: the Lake's compass point (uniform over 8), the landmark nearest the Station and the landmark
    nearest the walk's end (each uniform over the five non-Station names) are drawn, then the map is built around
    them and checked against every margin."""
    if level not in (1, 2, 3):
        raise ValueError(f"compass_bearings: level must be 1, 2 or 3, got {level!r}")
    d = Draws(rng)   # the Generator's own draws, cheaper
    sector = d.integers(8)
    near_target = OTHERS[d.integers(5)]
    walk_target = OTHERS[d.integers(5)]
    if level == 3:
        names = NAMES
    else:
        must = ["Lake"] + [n for n in dict.fromkeys((near_target, walk_target)) if n != "Lake"]
        rest = [n for n in OTHERS if n not in must]
        extra = [rest[i] for i in rng.permutation(len(rest))[:3 - len(must)]]
        names = ("Station",) + tuple(must + extra)
    nu = 0 if level == 1 else d.pick((-1, 1)) * d.integers(10, 61)
    ppk = round(d.uniform(70.0, 100.0), 1)
    n_legs = 3 if level == 3 else 2
    for _ in range(SAMPLE_TRIES):
        scene = _try(d, level, names, nu, ppk, sector, near_target, walk_target, n_legs)
        if scene is not None:
            return scene
    raise Reject("no_map_for_targets")


def _try(d: Draws, level, names, nu, ppk, sector, near_target, walk_target, n_legs):
    station = _uniform_point(d)
    if not _in_area(station):
        return None
    beta = 45.0 * sector + d.uniform(-22.5 + SECTOR_GAP_DEG + 1, 22.5 - SECTOR_GAP_DEG - 1)
    d_lake = d.uniform(max(LAKE_MIN_PX, LAKE_MIN_KM * ppk) + 10, 420.0)
    probe = Scene(level, nu, ppk, ("Station",), (station,), ())
    lake = tuple(round(c, 1) for c in step(probe, station, d_lake / ppk, beta))
    if not _free(lake, [station]):
        return None
    pos = {"Station": station, "Lake": lake}
    # The landmark nearest the Station: placed close to it, everything else kept 1.2x farther.
    if near_target == "Lake":
        d_near = d_lake
    else:
        d_near = d.uniform(SEPARATION_PX, max(SEPARATION_PX, d_lake / 1.35))
        a = d.uniform(0, 2 * math.pi)
        p = (round(station[0] + d_near * math.cos(a), 1), round(station[1] + d_near * math.sin(a), 1))
        if not _free(p, pos.values()):
            return None
        pos[near_target] = p
    for name in names:
        if name in pos:
            continue
        for _ in range(60):
            p = _uniform_point(d)
            if _free(p, pos.values()) and math.dist(p, station) >= 1.35 * d_near:
                pos[name] = p
                break
        else:
            return None
    positions = tuple(pos[n] for n in names)
    xs, ys = zip(*positions)
    if min(max(xs) - min(xs), max(ys) - min(ys)) < SPREAD_MIN * (AREA[2] - AREA[0]):
        return None   # a map with its landmarks bunched in one part leaves most of the canvas empty
    scene = Scene(level, nu, ppk, tuple(names), positions, ())
    # The walk ends within 0.6 km of its target, with room to spare over every other landmark.
    t = pos[walk_target]
    for _ in range(30):
        r, a = d.uniform(0.0, 0.6 * ppk), d.uniform(0, 2 * math.pi)
        end = (t[0] + r * math.cos(a), t[1] + r * math.sin(a))
        ranked = _ranked(scene, end)
        if _in_area(end) and ranked[0][1] == walk_target and _ratio(ranked) >= WALK_RATIO * 1.1:
            break
    else:
        return None
    legs = _legs_through(scene, d, end, n_legs, level)
    if legs is None:
        return None
    beta = lake_bearing(scene)
    turns = [t for m in TURNS_DEG for t in ((m, -m) if m < 180 else (m,)) if sector_gap(beta - t) >= SECTOR_GAP_DEG]
    scene = replace(scene, legs=legs, turn_deg=int(turns[d.integers(len(turns))]))
    pts = walk_points(scene)
    final = _ranked(scene, pts[-1])
    if not all(_in_area(p) for p in pts[1:]) or final[0][0] > WALK_NEAR_KM * ppk or final[0][1] != walk_target:
        return None
    if ladder(scene).failing_margins():
        return None
    return scene


# --- drawing --------------------------------------------------------------------------------------------------------

_LAKE_OUTLINE = tuple((22 * math.cos(t), 14 * math.sin(t)) for t in np.linspace(0, 2 * math.pi, 40, endpoint=False))


def _icon(canvas: Canvas, name: str, c) -> None:
    x, y = c
    k = ICON_SCALE

    def at(*offsets):   # icon outline from its design offsets (44 px design), scaled
        return [(x + k * dx, y + k * dy) for dx, dy in offsets]

    edge = Style(stroke=BLACK, fill=ICON_COLOURS[name], width_px=2.0)
    if name == "Station":
        rect(canvas, x - 13 * k, y - 13 * k, x + 13 * k, y + 13 * k, edge, owner=name)
        line(canvas, (x - 13 * k, y), (x + 13 * k, y), Style(stroke=(1, 1, 1), width_px=3.0), owner=name)
    elif name == "Lake":
        polygon(canvas, at(*_LAKE_OUTLINE), edge, owner=name)
    elif name == "Tower":
        polygon(canvas, at((-9, 16), (-5, -16), (5, -16), (9, 16)), edge, owner=name)
    elif name == "Mill":
        circle(canvas, c, 10 * k, edge, owner=name)
        for j in range(4):
            u = (math.cos(math.radians(45 + 90 * j)), math.sin(math.radians(45 + 90 * j)))
            line(canvas, *at((6 * u[0], 6 * u[1]), (19 * u[0], 19 * u[1])), Style(stroke=BLACK, width_px=4.0),
                 owner=name)
    elif name == "Hill":
        polygon(canvas, at((-20, 13), (0, -15), (20, 13)), edge, owner=name)
    elif name == "Farm":
        polygon(canvas, at((-14, 13), (-14, -3), (0, -16), (14, -3), (14, 13)), edge, owner=name)
    # The exact point every distance and bearing is measured from.
    circle(canvas, c, 4.0, Style(stroke=(1, 1, 1), fill=BLACK, width_px=1.5), owner=name)


def _north_arrow(canvas: Canvas, scene: Scene) -> None:
    cx, cy = NORTH_C
    circle(canvas, NORTH_C, NORTH_R, Style(stroke=GREY, fill=(1, 1, 1), width_px=2.0), owner="north")
    a = math.radians(scene.north_deg)
    u = (math.sin(a), -math.cos(a))
    tail = (cx - 36 * u[0], cy - 36 * u[1])
    tip = (cx + 38 * u[0], cy + 38 * u[1])
    arrow(canvas, tail, tip, Style(stroke=BLACK, width_px=4.0), head_px=18.0, owner="north")
    draw_text(canvas, "N", (cx + 60 * u[0], cy + 60 * u[1]), Style(stroke=None, font_px=22.0, bold=True,
                                                                   halo_px=3.0), register=True)


def _scale_bar(canvas: Canvas, scene: Scene) -> None:
    unit = scene.px_per_km
    for k in range(BAR_KM):
        fill = BLACK if k % 2 == 0 else (1, 1, 1)
        rect(canvas, BAR_X + k * unit, BAR_Y - 8, BAR_X + (k + 1) * unit, BAR_Y, Style(stroke=BLACK, fill=fill,
                                                                                       width_px=2.0), owner="bar")
    font = TEXT.with_(font_px=16.0)
    for k in range(BAR_KM + 1):
        line(canvas, (BAR_X + k * unit, BAR_Y - 14), (BAR_X + k * unit, BAR_Y), THIN, owner="bar")
        draw_text(canvas, str(k), (BAR_X + k * unit, BAR_Y - 26), font)
    draw_text(canvas, "km", (BAR_X + BAR_KM * unit + 26, BAR_Y - 4), font)


NAME_GAPS_PX = (2.0, 14.0)   # a name's gaps from its icon's box
NAME_CLEAR_PX = 8.0          # and its clearance from every stroke
BAND_PX = 0.05               # the distance shortcut in `_place_name` decides only this far from NAME_CLEAR_PX


def _place_name(canvas: Canvas, name: str, part_box) -> None:
    """`text.place_label_beside(canvas, name, part_box, owner="label", gaps_px=NAME_GAPS_PX)`, spot for spot, made
    cheaper: a candidate's clearance is read from GEOS distances where they are clearly below or above
    NAME_CLEAR_PX (GEOS draws a buffer's arcs with chords within a hundredth of a pixel of its radius); only near it
    is the box buffered, as there. Every placed label is an axis-aligned box, and two such boxes intersect exactly
    when their bounds overlap."""
    x0, y0, x1, y1 = part_box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = text_size(canvas, name, LABEL)
    centres = [c for g in NAME_GAPS_PX for c in (
        (x1 + g + w / 2, cy), (x0 - g - w / 2, cy), (cx, y0 - g - h / 2), (cx, y1 + g + h / 2),
        (x1 + g + w / 2, y0 - g - h / 2), (x0 - g - w / 2, y0 - g - h / 2),
        (x1 + g + w / 2, y1 + g + h / 2), (x0 - g - w / 2, y1 + g + h / 2))]
    reach = NAME_CLEAR_PX + 1.0
    placed = shapely.bounds(canvas.labels).tolist()
    for c in centres:
        bx0, by0, bx1, by1 = c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2
        if not canvas.box_inside_safe(bx0, by0, bx1, by1) or \
                any(u0 <= bx1 and bx0 <= u1 and v0 <= by1 and by0 <= v1 for u0, v0, u1, v1 in placed):
            continue
        near = canvas.strokes_near((bx0 - reach, by0 - reach, bx1 + reach, by1 + reach), "label")
        if near:
            b = shapely.box(bx0, by0, bx1, by1)
            d = min(shapely.distance(b, near).tolist())
            if d < NAME_CLEAR_PX - BAND_PX:
                continue
            if d <= NAME_CLEAR_PX + BAND_PX:
                grown = b.buffer(NAME_CLEAR_PX)
                if any(grown.intersects(g) for g in near):
                    continue
        canvas.labels.append(draw_text_px(canvas, name, c, LABEL))
        return
    raise Reject("label_clash")


def draw(scene: Scene, canvas: Canvas) -> None:
    x0, y0, x1, y1 = MAP
    ctx = canvas.ctx   # the map's paper tint is a backdrop: no label needs to avoid it, so it is not registered
    ctx.rectangle(x0, y0, x1 - x0, y1 - y0)
    ctx.set_source_rgb(*tint(OKABE_ITO["yellow"], 0.88))
    ctx.fill()
    rect(canvas, x0, y0, x1, y1, Style(stroke=GREY, width_px=2.0), owner="frame")
    _north_arrow(canvas, scene)
    _scale_bar(canvas, scene)
    for name, p in zip(scene.names, scene.positions):
        _icon(canvas, name, p)
    for name, p in zip(scene.names, scene.positions):
        # Beside its own icon's box; owned by no part, so every name keeps 8 px from every icon, its own included.
        _place_name(canvas, name, (p[0] - ICON_HALF, p[1] - ICON_HALF, p[0] + ICON_HALF, p[1] + ICON_HALF))


DOMAIN = Domain(
    id="compass_bearings", family="analytic", title="Compass Bearings", scene=Scene, sample=sample, ladder=ladder,
    draw=draw, edit=edit, counterfactual=counterfactual, minimal_pair=minimal_pair, rephrase_q4=rephrase_q4,
    minimal_pair_keeps_q1=False, rephrase_map="identity", version=3,
    description="A map with landmarks, a rotated north arrow and a scale bar: nearest landmark, compass point, "
                "bearing, where a stated walk ends, and the compass point after the north arrow is turned.",
    balance_keys=("nearest_to_station", "lake_direction", "walk_end", "lake_direction_turned"),
)
