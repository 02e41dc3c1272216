"""Bridges from grip's item stores and scorer to other evaluation frameworks. Each module imports its framework at
the top and is imported only by that framework (or by a user who asked for it), never by `grip build` or `grip eval`.

    inspect    inspect_ai tasks `grip/<domain>` and the scorer `grip_scorer` (extra `inspect`)
"""
