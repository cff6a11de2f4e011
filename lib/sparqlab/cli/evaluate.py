"""`sparqlab` subcommands of this area (placeholder until implemented)."""


def register(subparsers) -> None:
    """Add this area's subcommands."""
