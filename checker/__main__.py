"""`python -m checker` runs the `kata` command."""

from checker.entry import main

main()
