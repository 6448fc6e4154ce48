"""pytest-benchmark: a contest's length by layers (`exactdice.markov.reward_layers`) against
the capped-counter product solved by the solver (`exactdice.markov.reward_counts`), on the
same model and rounds, answers checked equal. Skipped under --benchmark-skip; run with
``pytest tests/karbon/test_bench_length.py --benchmark-only``."""

from __future__ import annotations

import pytest

from exactdice.karbon.setup import ContestSetup
from exactdice.karbon.solve import contest_odds
from exactdice.markov.reward_counts import reward_count_distribution
from exactdice.markov.reward_layers import absorption_by_reward

pytest.importorskip("pytest_benchmark")

ROUNDS = 20


@pytest.fixture(scope="module")
def odds():
    return contest_odds(ContestSetup(ability=3, challenge=2, consequence=2, peril=1))


@pytest.fixture(scope="module")
def product_law(odds):
    return reward_count_distribution(odds.model, "rounds", ROUNDS)


def test_bench_length_by_layers(benchmark, odds, product_law):
    layers = benchmark.pedantic(absorption_by_reward, args=(odds.model, "rounds", ROUNDS), rounds=3)
    assert [sum(layer.values()) for layer in layers.by_total] == [product_law[str(k)] for k in range(ROUNDS + 1)]


def test_bench_length_by_the_capped_counter_product(benchmark, odds, product_law):
    law = benchmark.pedantic(reward_count_distribution, args=(odds.model, "rounds", ROUNDS), rounds=3)
    assert law == product_law
