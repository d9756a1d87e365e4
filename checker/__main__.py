"""`python -m checker` runs the `kata` command."""

from checker.cli import main

main(prog_name="kata")
