"""The Optical family: classic illusions measured exactly, and objects that cannot exist in 3-D."""
