"""The `trace` subcommands: typer front-ends over tracer/ and replay/, one module per command family."""
