"""The Transformational family: rotations, reflections, folds and combinations of plane figures."""
