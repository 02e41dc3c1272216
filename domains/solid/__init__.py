"""The Solid family: unit-cube structures, nets, views and polyhedra drawn through the cameras of `renderers/projection.py`."""
