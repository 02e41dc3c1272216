"""Evaluation backend (DESIGN.md section 7): runner -> response store -> scoring -> statistics -> report."""
