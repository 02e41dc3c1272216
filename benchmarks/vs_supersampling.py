"""Per-image speed of grip's pipeline against drawing the same scenes by supersampling, per domain, in one run.

grip:    `generate` (sample, ladder, margins, the domain's draw at 1x) + grip's PNG encode (`encode_png`).
anchor:  what one would write without grip's renderer: the same sampling loop (sample, ladder, margins), the
         domain's own draw onto a 2x canvas (a 1536 px surface whose cairo context is scaled by 2, so the domain
         draws exactly as at 1x), Pillow LANCZOS down to 768 px, Pillow `save(optimize=True)` PNG.
Both run on the same items (release "0", the default level mix), alternating item by item (grip first on even
items, the anchor first on odd ones), timed in process CPU time (`time.process_time`), so other load on the
machine skews the ratio less than wall time would. One untimed warm-up item per domain pays for imports.

Columns: grip ms/img and anchor ms/img (CPU ms per image), ratio = anchor / grip (how many times faster grip is
per image; the target is >= 4), then "ok" or "LOW".

    python benchmarks/vs_supersampling.py [--n 8] [--domains gear_trains,clock_reading]
"""
from __future__ import annotations

import argparse
import io
import sys
import time

import cairo
import numpy as np
from PIL import Image

from grip import domains
from grip.builder import generate
from grip.domain import Reject
from grip.renderers.canvas import Canvas, encode_png
from grip.seeding import item_seed, level_for

TARGET = 4.0


class SupersampledCanvas(Canvas):
    """A Canvas whose surface has `factor` times the pixels; the cairo context is scaled so that every coordinate,
    stroke width and font size the domain uses means what it means at 1x."""

    def __init__(self, size_px: int, world, factor: int = 2):
        super().__init__(size_px, world)
        self.surface = cairo.ImageSurface(cairo.FORMAT_RGB24, self.size_px * factor, self.size_px * factor)
        self.ctx = cairo.Context(self.surface)
        self.ctx.scale(factor, factor)
        self.ctx.set_antialias(cairo.ANTIALIAS_GRAY)
        self.ctx.set_source_rgb(1.0, 1.0, 1.0)
        self.ctx.paint()

    def array(self) -> np.ndarray:
        self.surface.flush()
        n, stride = self.surface.get_height(), self.surface.get_stride()
        a = np.frombuffer(self.surface.get_data(), dtype=np.uint8).reshape(n, stride // 4, 4)[:, :n, :]
        return a[:, :, 2::-1].copy()


def grip_image(dom, seed: int, level: int) -> bytes:
    return encode_png(generate(dom, seed, level).rgb)


def anchor_image(dom, seed: int, level: int) -> bytes:
    rng = np.random.default_rng(seed)
    for _ in range(dom.max_attempts):
        try:
            scene = dom.sample(rng, level)
            lad = dom.ladder(scene)
        except Reject:
            continue
        if lad.failing_margins():
            continue
        canvas = SupersampledCanvas(dom.size_px, dom.world)
        try:
            dom.draw(scene, canvas)
        except Reject:
            continue
        im = Image.fromarray(canvas.array()).resize((dom.size_px, dom.size_px), Image.LANCZOS)
        buf = io.BytesIO()
        im.save(buf, format="PNG", optimize=True)
        return buf.getvalue()
    raise RuntimeError(f"{dom.id}: no scene in {dom.max_attempts} attempts")


def measure(domain_id: str, n: int) -> tuple[float, float]:
    """(grip CPU seconds per image, anchor CPU seconds per image) over items 1..n, alternating."""
    dom = domains.get(domain_id)
    grip_image(dom, item_seed("0", domain_id, 0), level_for(0, None))     # warm-up
    anchor_image(dom, item_seed("0", domain_id, 0), level_for(0, None))
    spent = {grip_image: 0.0, anchor_image: 0.0}
    for i in range(1, n + 1):
        seed, level = item_seed("0", domain_id, i), level_for(i, None)
        for fn in (grip_image, anchor_image) if i % 2 == 0 else (anchor_image, grip_image):
            t0 = time.process_time()
            fn(dom, seed, level)
            spent[fn] += time.process_time() - t0
    return spent[grip_image] / n, spent[anchor_image] / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8, help="timed images per domain and pipeline (default 8)")
    ap.add_argument("--domains", default=None, help="comma-separated ids (default: all registered)")
    args = ap.parse_args(argv)
    ids = args.domains.split(",") if args.domains else domains.ids()
    unknown = [d for d in ids if d not in domains.ids()]
    if unknown or args.n < 1:
        print(f"vs_supersampling: error: {'unknown domain ' + ', '.join(unknown) if unknown else '--n must be >= 1'}",
              file=sys.stderr)
        return 2
    print(f"{len(ids)} domains x {args.n} images, grip vs 2x supersampling + LANCZOS + optimize=True PNG "
          f"(CPU ms per image; ratio = anchor / grip, target >= {TARGET:g})", flush=True)
    print(f"{'domain':<22} {'grip ms':>8} {'anchor ms':>9} {'ratio':>6}", flush=True)
    ratios = []
    t_start = time.perf_counter()
    for d in ids:
        g, a = measure(d, args.n)
        ratios.append((a / g, d))
        print(f"{d:<22} {g * 1e3:>8.1f} {a * 1e3:>9.1f} {a / g:>6.2f} {'ok' if a / g >= TARGET else 'LOW'}",
              flush=True)
    low = [d for r, d in ratios if r < TARGET]
    print(f"min ratio {min(ratios)[0]:.2f} ({min(ratios)[1]}), median {float(np.median([r for r, _ in ratios])):.2f};"
          f" below {TARGET:g}: {', '.join(low) or 'none'}; {time.perf_counter() - t_start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
