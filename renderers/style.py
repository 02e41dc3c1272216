"""Style: frozen drawing attributes in pixels, and the Okabe-Ito palette plus greys."""
from __future__ import annotations

from dataclasses import dataclass, replace

RGB = tuple[float, float, float]


def hex_rgb(h: str) -> RGB:
    h = h.lstrip("#")
    return (int(h[0:2], 16) / 255, int(h[2:4], 16) / 255, int(h[4:6], 16) / 255)


def tint(c: RGB, amount: float) -> RGB:
    """Mix a colour with white (amount 0 = unchanged, 1 = white): pastel fills that keep black text legible."""
    return tuple(x + (1 - x) * amount for x in c)  # type: ignore[return-value]


# Okabe & Ito (2008), colour-blind safe. Colour is never the only cue: parts also carry letters or hatching.
OKABE_ITO: dict[str, RGB] = {
    "orange": hex_rgb("#E69F00"), "sky": hex_rgb("#56B4E9"), "green": hex_rgb("#009E73"),
    "yellow": hex_rgb("#F0E442"), "blue": hex_rgb("#0072B2"), "vermillion": hex_rgb("#D55E00"),
    "purple": hex_rgb("#CC79A7"), "black": (0.0, 0.0, 0.0),
}
PALETTE: tuple[RGB, ...] = tuple(OKABE_ITO[k] for k in
                                 ("orange", "sky", "green", "yellow", "blue", "vermillion", "purple"))
PASTELS: tuple[RGB, ...] = tuple(tint(c, 0.55) for c in PALETTE)
BLACK: RGB = (0.0, 0.0, 0.0)
WHITE: RGB = (1.0, 1.0, 1.0)
GREY_DARK: RGB = (0.25, 0.25, 0.25)
GREY: RGB = (0.55, 0.55, 0.55)
GREY_LIGHT: RGB = (0.82, 0.82, 0.82)
GREY_PALE: RGB = (0.93, 0.93, 0.93)


@dataclass(frozen=True)
class Style:
    """Stroke width, dash and font size are in pixels, constant under the world-to-pixel scale."""
    stroke: RGB | None = BLACK
    fill: RGB | None = None
    width_px: float = 3.0
    dash_px: tuple[float, ...] = ()
    font_px: float = 18.0
    bold: bool = False
    halo_px: float = 0.0
    text: RGB = BLACK

    def with_(self, **kw) -> "Style":
        return replace(self, **kw)


OUTLINE = Style(width_px=3.0)
THIN = Style(width_px=2.0)
LABEL = Style(stroke=None, font_px=20.0, bold=True, halo_px=3.0)   # part labels: bold >= 18 px, 3 px halo
TEXT = Style(stroke=None, font_px=16.0, halo_px=2.0)               # other text >= 14 px
