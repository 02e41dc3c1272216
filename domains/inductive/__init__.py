"""The Inductive family: rule induction over a matrix of panels."""
