"""The Projective family: patterns behind occluders and shadows cast by a light."""
