"""P(win) of an Ability 3 Agent against Challenges 1-5 (track 2, peril 1), exactly."""

from exactdice.core.display import Display
from exactdice.karbon import ContestSetup, contest_odds

show = Display()  # how the command line prints an exact value
for challenge in range(1, 6):
    odds = contest_odds(ContestSetup(ability=3, challenge=challenge, consequence=2, peril=1))
    assert odds.win + odds.loss + odds.tie + odds.never_ends == 1  # exactly, as Fractions
    print(f"Challenge {challenge}: P(win) {show.probability(odds.win)}")
