"""``uqkit study ...`` subcommands (filled in by the studies)."""


def add_study(sub):
    """Register the ``study`` subcommand and its studies."""
    sub.add_parser("study", help="run one of the paper's studies")
