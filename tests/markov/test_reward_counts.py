"""The law of a reward's total against a closed form and a step-by-step forward pass."""

from fractions import Fraction

import pytest

from exactdice.markov.reward_counts import HasDecisions, reward_count_distribution
from exactdice.markov.synthetic import ContestChain, GamblersRuin


def test_symmetric_ruin_from_the_middle_ends_after_2k_bets_with_probability_half_to_the_k():
    law = reward_count_distribution(GamblersRuin(goal=4, start=2, up=1, down=1), "bets", cap=12)
    for bets in range(13):
        expected = Fraction(1, 2 ** (bets // 2)) if bets % 2 == 0 and bets > 0 else 0
        assert law[str(bets)] == expected
    assert law["13+"] == Fraction(1, 2**6)


def forward(model, cap, steps):
    """P(total = k) for k <= cap by pushing exact mass through ``steps`` steps (a brute force)."""
    mass, law = {(model.initial_state(), 0): Fraction(1)}, {}
    for _ in range(steps):
        following = {}
        for (state, total), p in mass.items():
            node = model.expand(state)
            if not hasattr(node, "branches"):
                law[total] = law.get(total, 0) + p
                continue
            whole = sum(weight for weight, _, _ in node.branches)
            for weight, successor, rewards in node.branches:
                key = (successor, total + (rewards[0] if rewards else 0))
                following[key] = following.get(key, 0) + p * Fraction(weight, whole)
        mass = following
    return {k: law.get(k, 0) for k in range(cap + 1)}


@pytest.mark.parametrize("goal,start,up,down", [(5, 2, 2, 1), (6, 3, 1, 3), (3, 1, 5, 2)])
def test_asymmetric_ruin_matches_a_forward_pass(goal, start, up, down):
    model = GamblersRuin(goal=goal, start=start, up=up, down=down)
    cap = 9
    law = reward_count_distribution(model, "bets", cap)
    # every bet is one step, so after cap + 2 steps the totals up to cap are final
    assert {int(k): v for k, v in law.items() if not k.endswith("+")} == forward(model, cap, cap + 2)
    assert sum(law.values()) == 1


def test_a_model_with_decisions_is_refused():
    with pytest.raises(HasDecisions):
        reward_count_distribution(
            ContestChain(size=40, branches=3, decision_every=2, seed=1),
            ContestChain(size=40, branches=3, decision_every=2, seed=1).reward_names[0],
            3,
        )
