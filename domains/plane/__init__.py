"""The Plane family: nested figures, line crossings and angles drawn on the page."""
