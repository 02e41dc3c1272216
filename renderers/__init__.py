"""The shared cairo drawing toolkit: canvas (one world-to-pixel transform), style and palette, shapes, text."""
from grip.renderers.canvas import Canvas, decode_png, encode_png, png_chunk_types  # noqa: F401
from grip.renderers.style import (BLACK, GREY, GREY_DARK, GREY_LIGHT, GREY_PALE, LABEL, OUTLINE, PALETTE,  # noqa: F401
                                  PASTELS, TEXT, THIN, WHITE, Style)
