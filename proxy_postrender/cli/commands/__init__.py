"""The click commands: the main command and one module per subcommand, each imported
only when it runs (the table of them is :mod:`proxy_postrender.cli.table`)."""
