"""The Topological family: surfaces from glued squares, route graphs and paths on hex grids."""
