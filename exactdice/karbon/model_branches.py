"""What a walk of a round collects: branches ``(situation, packed rewards) -> (num, den)``,
each probability an unreduced fraction and the reward counters packed into one int (16
bits a counter) so that adding them is cheap; `normalise` turns them into the integer
weights of a `exactdice.markov` node.

>>> branches = {}
>>> emit(branches, "a", 1, 2, NO_REWARD)
>>> emit(branches, "b", 1, 3, ONE_ROUND + ONE_BREAK)
>>> normalise(branches)
((3, 'a', None), (2, 'b', (1, 1, 0, 0, 0)))
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = [
    "REWARD_NAMES",
    "NO_REWARD",
    "ONE_ROUND",
    "ONE_BREAK",
    "ONE_GLITCH",
    "ONE_INJURY",
    "ONE_CONDITION",
    "unpack_rewards",
    "emit",
    "normalise",
]

REWARD_NAMES = ("rounds", "breaks", "glitches", "injuries", "conditions")
# Rewards along a path are packed into one int (16 bits a counter) so adding them is cheap.
_REWARD_BITS = 16
NO_REWARD = 0
#: one more of each counter of `REWARD_NAMES`, packed
ONE_ROUND, ONE_BREAK, ONE_GLITCH, ONE_INJURY, ONE_CONDITION = (1 << (_REWARD_BITS * i) for i in range(5))


@lru_cache(maxsize=None)
def unpack_rewards(packed: int):
    """Packed reward counters -> the tuple the solver expects (None when all zero)."""
    if not packed:
        return None
    mask = (1 << _REWARD_BITS) - 1
    return tuple((packed >> (_REWARD_BITS * i)) & mask for i in range(len(REWARD_NAMES)))


def emit(out: dict, situation, num: int, den: int, reward: int) -> None:
    """Add num/den to the branch (situation, packed reward) of ``out``."""
    key = (situation, reward)
    previous = out.get(key)
    if previous is None:
        out[key] = (num, den)
    else:  # add num/den fractions without reducing
        pn, pd = previous
        if pd == den:
            out[key] = (pn + num, den)
        else:
            out[key] = (pn * den + num * pd, pd * den)


def normalise(branches: dict) -> tuple:
    """Integer weights over one common denominator for the solver."""
    common = math.lcm(*(den for _, den in branches.values()))
    result = []
    for (situation, reward), (num, den) in branches.items():
        result.append((num * (common // den), situation, unpack_rewards(reward)))
    divisor = math.gcd(*(weight for weight, _, _ in result))
    if divisor > 1:
        result = [(weight // divisor, situation, reward) for weight, situation, reward in result]
    return tuple(result)
