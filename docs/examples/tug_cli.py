"""The exactdice command line with tug of war registered."""

from exactdice.cli.main import main
from exactdice.systems import register
from tug_system import SYSTEM

register("tug-of-war", SYSTEM)
main()
