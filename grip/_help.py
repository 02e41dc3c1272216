"""Command listings that show each command's whole first paragraph (click cuts it to one line with "..."), and
commands imported only when they run or are listed (`grip build` must not pay for `grip eval`'s imports)."""
from __future__ import annotations

import importlib

import click


class FullHelpGroup(click.Group):
    lazy: dict[str, str] = {}   # command name -> "module:attribute", imported on first use

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str):
        cmd = super().get_command(ctx, name)
        if cmd is None and name in self.lazy:
            module, attr = self.lazy[name].split(":")
            cmd = getattr(importlib.import_module(module), attr)
            self.add_command(cmd, name)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            text = cmd.short_help or (cmd.help or "").split("\n\n")[0]
            rows.append((name, " ".join(text.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
