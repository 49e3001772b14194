"""``pelctl demo up|down|status|env``."""

from __future__ import annotations

from typing import Annotated

import typer

from pelctl.cli.options import Runtime, pelctl_command

demo_app = typer.Typer(
    help="A throwaway local redis-server seeded with a realistic incident.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(demo_app, name="demo", rich_help_panel="Other")


@pelctl_command(demo_app, "up")
def up(
    rt: Runtime,
    print_url: Annotated[
        bool, typer.Option("--print-url", help="Print only the URL (for scripts).")
    ] = False,
) -> None:
    """Start the demo server (if not running) and seed the incident; print its URL."""
    from pelctl.demo import server as demo

    state, started = demo.up()
    if print_url:
        rt.out.line(state.url)
        return
    verb = "started" if started else "already running"
    rt.info(f"demo redis-server {verb} on {state.url} (pid {state.pid}, dir {state.dir})")
    rt.out.line(state.url)
    rt.info(f"try:  export PELCTL_URL={state.url}")
    rt.info("      pelctl streams && pelctl inspect orders")
    rt.info("stop it with: pelctl demo down")


@pelctl_command(demo_app, "down")
def down(rt: Runtime) -> None:
    """Stop the demo server and delete its data."""
    from pelctl.demo import server as demo

    state = demo.down()
    rt.info("demo stopped" if state else "no demo was running")


@pelctl_command(demo_app, "status")
def status(rt: Runtime) -> int:
    """Show whether the demo is running (exit 1 if not)."""
    from pelctl.demo import server as demo
    from pelctl.render.demo import STATUS

    state = demo.status()
    rt.out.result(STATUS, state)
    return 0 if state else 1


@pelctl_command(demo_app, "env")
def env(rt: Runtime) -> int:
    """Print `export PELCTL_URL=...` for the running demo (eval "$(pelctl demo env)")."""
    from pelctl.demo import server as demo

    state = demo.status()
    if state is None:
        rt.info("no demo running (start it with: pelctl demo up)")
        return 1
    rt.out.line(f"export PELCTL_URL={state.url}")
    return 0
