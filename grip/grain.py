"""Deterministic monochrome Gaussian grain. One float32 N(0, 1) field per image, seeded by the image's file name,
scaled by sigma, added to all three channels, rounded and clipped to uint8. The same field at every sigma: only the
magnitude changes, so grain levels are paired within an image."""
from __future__ import annotations

import numpy as np

from grip.seeding import grain_seed

SIGMAS: tuple[int, ...] = (15, 25, 40)


def grain_field(shape: tuple[int, int], file_name: str) -> np.ndarray:
    return np.random.default_rng(grain_seed(file_name)).standard_normal(shape, dtype=np.float32)


def add_grain(rgb: np.ndarray, sigma: float, field: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
    """`rgb` + sigma * field, rounded to the nearest integer (ties to even) and clipped to 0..255, in float32.
    `base`: `rgb` as float32, when the caller has it (one conversion for every sigma)."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3:
        raise ValueError("add_grain expects an H x W x 3 uint8 image")
    noisy = (rgb.astype(np.float32) if base is None else base) + (np.float32(sigma) * field)[:, :, None]
    np.rint(noisy, out=noisy)           # in place: the same float32 values, no new arrays
    np.clip(noisy, 0, 255, out=noisy)
    return noisy.astype(np.uint8)


def grain_copies(rgb: np.ndarray, file_name: str, sigmas=SIGMAS) -> dict[int, np.ndarray]:
    field = grain_field(rgb.shape[:2], file_name)
    base = rgb.astype(np.float32)
    return {int(s): add_grain(rgb, s, field, base) for s in sigmas}
