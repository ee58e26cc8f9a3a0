from .drivers.cli import run

run()
