"""`python -m inductor_warehouse ...` is `iwh ...`."""

from inductor_warehouse.cli.main import main

main()
