"""Contests the web tests share."""

#: a contest that takes about 30 s on this 2-core machine, over a minute on one core (for Cancel)
LONG_CONTEST = {"ability": 5, "challenge": 5, "consequence": 5, "peril": 2}
#: the README's main contest (karbon odds --ability 3 --challenge 2 --consequence 2 --peril 1)
MAIN_CONTEST = {"ability": 3, "challenge": 2, "consequence": 2, "peril": 1}
#: a contest solved in a blink (one die each, a one-place track)
TINY_CONTEST = {"player_dice": "d6", "narrator_dice": "d10", "consequence": 1, "pool": "none", "reserve": "none"}


def sample_csv(counts: dict) -> str:
    """A CSV in the simulator's format (an ``outcome`` column) with these outcome counts."""
    rows = ["contest,outcome,rounds"]
    number = 0
    for outcome, count in counts.items():
        for _ in range(count):
            number += 1
            rows.append(f"{number},{outcome},3")
    return "\n".join(rows) + "\n"
