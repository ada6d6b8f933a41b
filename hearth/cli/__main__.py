from hearth.cli import run

run()
