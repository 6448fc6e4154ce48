"""The compiled rules walk (`exactdice.karbon._walk`) against the Python walk, the reference.

Generated setups across every knob, policy kind, custom pools, explicit hands and
mid-contest states: the two walks must give the same graph (the same states, for each
state the same successors with the same weights, the same reward masses, the same
decisions with their options in order) and every exact answer must be the identical
Fraction on both paths.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from exactdice.errors import InputError, InternalError, TooLargeError
from exactdice.karbon import ContestSetup, Rules
from exactdice.karbon.compiled import WALK_VARIABLE, compiled_available, explore_compiled
from exactdice.karbon.draws import DrawSearchModel
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import BREAK_OPTIONS, GLITCH_OPTIONS, NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import RULE_CHOICES
from exactdice.karbon.solve import payoffs
from exactdice.markov import explore, solve
from exactdice.markov.arrays import ArrayGraph
from exactdice.markov.graph import DECISION

needs_compiled = pytest.mark.skipif(not compiled_available(), reason="the compiled walk is not built in this install")

# the Python walk explores these setups in well under a second each
_MOST_STATES = 3000
_SIZES = (4, 6, 8, 10, 12)


@contextmanager
def _walk(name):
    previous = os.environ.get(WALK_VARIABLE)
    os.environ[WALK_VARIABLE] = name
    try:
        yield
    finally:
        if previous is None:
            del os.environ[WALK_VARIABLE]
        else:
            os.environ[WALK_VARIABLE] = previous


def _model(setup, ruleset, player, narrator, split_rolls=None):
    if setup.player_dice is None and (player.kind == "optimal" or narrator.kind in ("optimal", "kind")):
        return DrawSearchModel(setup, ruleset, player, narrator)
    start = setup.start(player, narrator)
    return KarbonModel(start.sizes, start.situation(), ruleset, player, narrator, split_rolls=split_rolls)


def _signature(graph) -> dict:
    """Per state: kind, data, its successors (by state, with weights; a decision's options
    in order, with names and rewards) and its reward mass."""
    result = {}
    for node in range(graph.num_states):
        low, high = graph.offsets[node], graph.offsets[node + 1]
        if graph.kind[node] == DECISION:
            edges = tuple(
                (graph.action_names[edge], graph.states[graph.targets[edge]], graph.action_rewards.get(edge))
                for edge in range(low, high)
            )
        else:
            edges = tuple(
                sorted(
                    ((graph.states[graph.targets[edge]], graph.weights[edge]) for edge in range(low, high)), key=repr
                )
            )
        result[graph.states[node]] = (graph.kind[node], graph.data[node], edges, graph.chance_reward_mass[node])
    return result


def _both_graphs(setup, ruleset, player, narrator, split_rolls=None):
    with _walk("python"):
        reference = explore(
            _model(setup, ruleset, player, narrator, split_rolls), max_states=_MOST_STATES, workers=0, progress=False
        )
    with _walk("compiled"):
        compiled = explore(
            _model(setup, ruleset, player, narrator, split_rolls), max_states=_MOST_STATES, progress=False
        )
    assert isinstance(compiled, ArrayGraph) and not isinstance(reference, ArrayGraph)
    return reference, compiled


def _assert_same(reference, compiled, ruleset):
    assert compiled.num_states == reference.num_states
    assert compiled.num_transitions == reference.num_transitions
    assert _signature(compiled) == _signature(reference)
    payoff, endless = payoffs(ruleset)
    answers = [solve(graph, payoff=payoff, nonterminating_payoff=endless) for graph in (reference, compiled)]
    python_answer, compiled_answer = answers
    assert compiled_answer.absorption == python_answer.absorption
    assert compiled_answer.never_ends == python_answer.never_ends
    assert compiled_answer.value == python_answer.value
    assert compiled_answer.expected_steps == python_answer.expected_steps
    assert compiled_answer.expected_rewards == python_answer.expected_rewards
    assert compiled_answer.strategy == python_answer.strategy
    assert sum(compiled_answer.absorption.values()) + compiled_answer.never_ends == 1


# ----- generated setups ------------------------------------------------------------------------


def _dice(draw, most_types=3, most_count=3, least=0):
    sizes = draw(st.lists(st.sampled_from(_SIZES), min_size=1, max_size=most_types, unique=True))
    counts = {size: draw(st.integers(least, most_count)) for size in sizes}
    return {size: count for size, count in counts.items() if count}


@st.composite
def _policies(draw):
    player_kind = draw(st.sampled_from(["fixed", "fixed", "fixed", "optimal"]))
    if player_kind == "optimal":
        player = PlayerPolicy(kind="optimal")
    else:
        player = PlayerPolicy(
            risk=draw(st.sampled_from(["never", "always"])),
            risk_take=tuple(draw(st.permutations([6, 8, 10]))),
            break_order=tuple(draw(st.permutations(BREAK_OPTIONS))),
            glitch_order=tuple(draw(st.permutations(GLITCH_OPTIONS))),
            sideswipe_take=draw(st.sampled_from(["dice", "chips"])),
        )
    narrator_kind = draw(st.sampled_from(["fixed", "fixed", "random", "optimal", "kind"]))
    narrator = NarratorPolicy(
        kind=narrator_kind,
        hurt=draw(st.sampled_from(["condition", "injury"])),
        plans=draw(st.sampled_from(["peril", "dice"])),
        plans_take=tuple(draw(st.permutations([6, 8, 10]))),
        give=tuple(draw(st.permutations([6, 8, 10]))),
    )
    return player, narrator


@st.composite
def _rules(draw):
    return Rules(**{name: draw(st.sampled_from(choices)) for name, choices in RULE_CHOICES.items()})


@st.composite
def _setups(draw):
    consequence = draw(st.integers(1, 3))
    common = dict(
        consequence=consequence,
        peril=draw(st.integers(0, 2)),
        pool=_dice(draw, most_count=2),
        reserve=_dice(draw, most_types=2, most_count=1),
    )
    if draw(st.booleans()):  # a draw from the pool
        setup = dict(
            ability=draw(st.integers(0, 2)),
            challenge=draw(st.integers(1, 2)),
            fortune=draw(st.integers(0, 2)),
            training=draw(st.booleans()),
            fallout=draw(st.integers(0, 1)),
            **common,
        )
    else:  # explicit hands, possibly mid-contest
        setup = dict(
            player_dice=_dice(draw, most_count=2),
            narrator_dice=_dice(draw, most_count=2, least=1),
            draw_chips=draw(st.booleans()),
            fallout=draw(st.integers(0, 1)),
            **common,
        )
        if draw(st.booleans()):
            wins = draw(st.integers(0, consequence - 1))
            setup.update(
                player_chips=draw(st.integers(0, 12)),
                narrator_chips=draw(st.integers(0, 12)),
                player_stack=draw(st.integers(0, 4)),
                narrator_stack=draw(st.integers(0, 4)),
                wins=wins,
                losses=draw(st.integers(0, consequence - 1 - wins)),
            )
    return setup


@needs_compiled
@settings(
    max_examples=320,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(_setups(), _policies(), _rules())
def test_the_compiled_walk_gives_the_python_walks_graph_and_answers(setup_kwargs, policies, ruleset):
    player, narrator = policies
    try:
        setup = ContestSetup(**setup_kwargs)
        reference, compiled = _both_graphs(setup, ruleset, player, narrator)
    except (InputError, TooLargeError):
        assume(False)  # a setup the rules refuse, or past the test's size
    _assert_same(reference, compiled, ruleset)


@needs_compiled
@pytest.mark.parametrize("split_rolls", [False, True])
@pytest.mark.parametrize("player", ["never", "always"])
def test_the_cut_after_the_roll_is_the_same_on_both_walks(split_rolls, player):
    setup = ContestSetup(ability=1, challenge=1, consequence=1, peril=1, pool={6: 2, 8: 1}, reserve={6: 1})
    reference, compiled = _both_graphs(setup, Rules(), PlayerPolicy(risk=player), NarratorPolicy(), split_rolls)
    _assert_same(reference, compiled, Rules())


@needs_compiled
@pytest.mark.parametrize("split_rolls", [False, True])
def test_the_situation_tables_slots_freed_after_exploring_come_back_for_a_look_up(split_rolls):
    """Exploring ends by freeing the situation table's hash slots (the keys stay); the
    first look-up of a state by its situation makes them again, and every node is found
    where it is."""
    setup = ContestSetup(ability=2, challenge=2, consequence=2, peril=1)
    with _walk("compiled"):
        graph = explore(
            _model(setup, Rules(), PlayerPolicy(risk="always"), NarratorPolicy(), split_rolls), progress=False
        )
    walk = graph.owner
    assert walk.memory_parts()["state slots"] == 0
    assert walk.memory_parts()["state keys"] % (8 * graph.num_states) == 0  # no spare room
    assert all(graph.index[graph.states[node]] == node for node in range(graph.num_states))
    assert walk.memory_parts()["state slots"] >= 4 * 2 * graph.num_states
    with pytest.raises(KeyError):
        graph.index[("no such state",)]


@needs_compiled
def test_a_node_expanded_after_the_caches_are_dropped_makes_the_slots_again():
    """A second reader's reproducer: expanding a node after `drop_caches` wrote past the
    freed slots (a crash); the slots are made again first, and the walk goes on."""
    from exactdice.karbon import compiled

    setup = ContestSetup(ability=2, challenge=2, consequence=2, peril=1)
    model = _model(setup, Rules(), PlayerPolicy(), NarratorPolicy())
    walk = compiled._walk.CompiledWalk(compiled._config(model, model))
    walk.start(model.initial_state(), 10**6)
    walk.drop_caches()
    walk.expand_node(0)
    assert walk.memory_parts()["state slots"] > 0 and walk.node_of(model.initial_state()) == 0


@needs_compiled
def test_the_spec_micro_example_on_the_compiled_walk():
    """Spec section 9: 100 reachable states and the exact P(win)."""
    from fractions import Fraction

    from exactdice.karbon.solve import contest_odds

    setup = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})
    with _walk("compiled"):
        odds = contest_odds(setup)
    assert odds.states == 100 and odds.tie == 0
    assert odds.win == Fraction(
        5990740867607044698482871905123999658267434893078700, 9080225136878889747585636270823606341219939818857851
    )


@needs_compiled
def test_python_forces_the_reference_walk():
    setup = ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2}, reserve={})
    start = setup.start(PlayerPolicy(), NarratorPolicy())
    model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
    with _walk("python"):
        assert explore_compiled(model, max_states=100) is None
    with _walk("compiled"):
        assert isinstance(explore_compiled(model, max_states=100), ArrayGraph)
    with _walk("quick"), pytest.raises(InputError, match="EXACTDICE_WALK: must be python or compiled"):
        explore_compiled(model, max_states=100)


@needs_compiled
def test_a_setup_past_the_compiled_widths_is_walked_in_python():
    """Dozens of peril dice pass the compiled walk's 128-bit weights: exploring falls back
    to the Python walk, quietly, with the same answer; asked for, the compiled walk says why."""
    setup = ContestSetup(player_dice={8: 1}, narrator_dice={8: 1}, consequence=1, peril=60, pool={}, reserve={})
    start = setup.start(PlayerPolicy(), NarratorPolicy())
    model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
    assert explore_compiled(model, max_states=10_000) is None
    with _walk("compiled"), pytest.raises(InputError, match="cannot take this contest"):
        explore_compiled(model, max_states=10_000)


@needs_compiled
def test_the_state_limit_names_the_parameter():
    setup = ContestSetup(ability=2, challenge=2, consequence=2, peril=1)
    start = setup.start(PlayerPolicy(), NarratorPolicy())
    model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
    with _walk("compiled"), pytest.raises(TooLargeError, match="max_states: reached 50 states"):
        explore(model, max_states=50, progress=False)


def test_an_install_without_the_compiled_walk_says_so_once_and_walks_in_python(monkeypatch, capsys):
    """The extension missing (a machine that could not build it): one line on stderr, the
    first time, and the Python walk's graph; asked for by name, a clear error."""
    import exactdice.karbon.compiled as compiled

    monkeypatch.setattr(compiled, "_walk", None)
    monkeypatch.setattr(compiled, "_IMPORT_ERROR", "No module named 'exactdice.karbon._walk'")
    monkeypatch.setattr(compiled, "_notice_given", False)
    monkeypatch.delenv(WALK_VARIABLE, raising=False)
    setup = ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2}, reserve={})
    start = setup.start(PlayerPolicy(), NarratorPolicy())
    model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
    first = explore(model, progress=False)
    second = explore(model, progress=False)
    assert not isinstance(first, ArrayGraph) and first.num_states == second.num_states
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "exactdice: the compiled Karbon walk is not built in this install (No module named "
        "'exactdice.karbon._walk'); the Python walk explores instead (slower, the same answers)"
    ]
    with _walk("compiled"), pytest.raises(InputError, match="the compiled walk is not built in this install"):
        explore(model, progress=False)


@needs_compiled
@pytest.mark.parametrize("split_rolls", [False, True])
def test_forgetting_the_rests_of_rounds_on_the_way_changes_no_edge(split_rolls, monkeypatch):
    """The rests of rounds are forgotten all at once past a bound (``rest_kept``); kept
    at a few dozen they are forgotten many times in one walk, and the graph is the same.
    Split rolls make every rest one edge, held in its table slot."""
    from exactdice.karbon import compiled

    setup = ContestSetup(ability=2, challenge=1, consequence=2, peril=1, pool={6: 2, 8: 2}, reserve={6: 1})
    reference, kept = _both_graphs(setup, Rules(), PlayerPolicy(), NarratorPolicy(), split_rolls)
    with_default_cache = compiled._config
    monkeypatch.setattr(compiled, "_config", lambda *arguments: {**with_default_cache(*arguments), "rest_kept": 40})
    with _walk("compiled"):
        forgetful = explore(
            _model(setup, Rules(), PlayerPolicy(), NarratorPolicy(), split_rolls),
            max_states=_MOST_STATES,
            progress=False,
        )
    assert _signature(forgetful) == _signature(kept) == _signature(reference)


@needs_compiled
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(_setups(), _policies(), _rules(), st.booleans())
def test_a_round_starts_outcomes_appended_unmerged_are_the_merged_edges(setup_kwargs, policies, ruleset, split):
    """Where each rest of a round is one edge (the cut after the roll, a deciding player),
    a round start's roll outcomes are appended without being merged, as no two reach one
    state: every array is the one the merging walk makes."""
    from exactdice.karbon import compiled

    player, narrator = policies
    assume(split or player.kind == "optimal")
    try:
        setup = ContestSetup(**setup_kwargs)
        model = _model(setup, ruleset, player, narrator, split_rolls=split or None)
    except InputError:
        assume(False)
    graphs = []
    for merged in (False, True):
        with pytest.MonkeyPatch.context() as patch, _walk("compiled"):
            config = compiled._config
            patch.setattr(
                compiled, "_config", lambda *arguments: {**config(*arguments), "merge_round_outcomes": merged}
            )
            try:
                graph = explore(model, max_states=_MOST_STATES, progress=False)
            except (TooLargeError, InputError):  # past the state limit, or past the compiled widths
                assume(False)
        csr = graph.csr
        arrays = (csr.kind, csr.data, csr.offsets, csr.targets, csr.weights, csr.mass)
        graphs.append([array.tobytes() for array in arrays] + [csr.big, csr.big_mass])
    assert graphs[0] == graphs[1]


# Run in a fresh process: there malloc serves an 8 MiB block from a new mapping. In a process
# that has freed large blocks it may serve it from heap memory flagged by an earlier walk,
# which adds no flagged KiB.
_HUGE_PAGES_PROGRAM = """
from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules, compiled
from exactdice.karbon.model import KarbonModel


def flagged_kib():
    total = size = 0
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("VmFlags:") and "hg" in line.split()[1:]:
                total += size
    return total


setup = ContestSetup(ability=2, challenge=1, consequence=2, peril=1, pool={6: 2, 8: 2}, reserve={6: 1})
start = setup.start(PlayerPolicy(), NarratorPolicy())
model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
config = {**compiled._config(model, model), "expected_states": 600_000}
before = flagged_kib()
walk = compiled._walk.CompiledWalk(config)
print(flagged_kib() - before)
"""


@needs_compiled
@pytest.mark.skipif(
    not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"), reason="no transparent huge pages here"
)
def test_the_walks_large_tables_ask_for_huge_pages_and_change_no_edge(monkeypatch):
    """A table of 2 MiB or more (here the situations' slots, sized for 600,000 situations:
    8 MiB) is marked for huge pages while the walk holds it; the graph is the same."""
    from exactdice.karbon import compiled

    flagged = subprocess.run(
        [sys.executable, "-c", _HUGE_PAGES_PROGRAM], capture_output=True, text=True, check=True, timeout=120
    )
    assert int(flagged.stdout.strip()) >= 8 * 1024

    setup = ContestSetup(ability=2, challenge=1, consequence=2, peril=1, pool={6: 2, 8: 2}, reserve={6: 1})
    reference, small_tables = _both_graphs(setup, Rules(), PlayerPolicy(), NarratorPolicy())
    with_default_size = compiled._config
    monkeypatch.setattr(
        compiled, "_config", lambda *arguments: {**with_default_size(*arguments), "expected_states": 600_000}
    )
    with _walk("compiled"):
        large_tables = explore(
            _model(setup, Rules(), PlayerPolicy(), NarratorPolicy()), max_states=_MOST_STATES, progress=False
        )
    assert _signature(large_tables) == _signature(small_tables) == _signature(reference)


# A5 v C5, W3 P1 remembers 73,608 rests: with the next slots made ahead from 16,384 slots on,
# its table grows from 16,384 slots to 262,144, each time into slots made on the other core;
# pinned to one processor it fills them itself. With split rolls and at most 30,000 rests kept,
# the table is forgotten 7 times on the way: each time it grows to 32,768 and 65,536 slots
# into slots made ahead, and at 28,672 rests (7/8 of the way to its next growth, which would
# come after 30,000) none are made.
_GROWN_AHEAD_PROGRAM = """
import hashlib, json, os, sys

processors, split_rolls, rest_kept = sys.argv[1], sys.argv[2] == "split", int(sys.argv[3])
if processors == "one":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules, compiled
from exactdice.karbon.model import KarbonModel
from exactdice.markov import explore

with_defaults = compiled._config
compiled._config = lambda *arguments: {
    **with_defaults(*arguments), "rests_made_ahead_from": 16384, "rest_kept": rest_kept
}
setup = ContestSetup(ability=5, challenge=5, consequence=3, peril=1)
start = setup.start(PlayerPolicy(), NarratorPolicy())
model = KarbonModel(
    start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy(), split_rolls=split_rolls
)
graph = explore(model, progress=False)
csr = graph.csr
digest = hashlib.sha256()
for array in (csr.kind, csr.data, csr.offsets, csr.targets, csr.weights, csr.mass):
    digest.update(array.tobytes())
digest.update(repr((sorted(csr.big.items()), sorted(csr.big_mass.items()))).encode())
stats = graph.owner.stats()
print(json.dumps({"digest": digest.hexdigest(), **{name: stats[name] for name in (
    "rests_made_ahead", "rests_grown_ahead", "rest_clears"
)}}))
"""


@needs_compiled
@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs two processors"
)
@pytest.mark.parametrize(
    "split_rolls, rest_kept, grown, clears", [("whole", 4_000_000, 4, 0), ("split", 30_000, 16, 7)]
)
def test_the_rests_table_growing_into_slots_made_on_the_other_core_changes_no_edge(
    split_rolls, rest_kept, grown, clears
):
    """A large rests' table's next slots are made on the other core before it grows into
    them (`rests_made_ahead_from`), and only where it grows before the walk forgets its
    rests (`rest_kept`); on one processor the table fills them itself. The graphs are
    identical."""
    import json

    def run(processors):
        environment = {**os.environ, WALK_VARIABLE: "compiled"}
        done = subprocess.run(
            [sys.executable, "-c", _GROWN_AHEAD_PROGRAM, processors, split_rolls, str(rest_kept)],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
            env=environment,
        )
        return json.loads(done.stdout)

    two, one = run("two"), run("one")
    assert two["rests_made_ahead"] == two["rests_grown_ahead"] == grown
    assert two["rest_clears"] == one["rest_clears"] == clears
    assert one["rests_made_ahead"] == one["rests_grown_ahead"] == 0
    assert two["digest"] == one["digest"]


# ----- summing in a second thread --------------------------------------------------------------

_SUMMED_MOST_STATES = 5000
_SUMMED_SETUPS = {
    "rests of several branches": (dict(ability=2, challenge=2, consequence=2, peril=1), {}, None),
    "rests of one edge (split rolls)": (dict(ability=2, challenge=1, consequence=2, peril=1), {}, True),
    "a kind narrator's decisions": (
        dict(ability=2, challenge=1, consequence=2, peril=1),
        dict(narrator=NarratorPolicy(kind="kind")),
        None,
    ),
    "an optimal player's draws and decisions": (
        dict(ability=1, challenge=1, consequence=1, peril=0, pool={8: 2, 10: 1}, reserve={}),
        dict(player=PlayerPolicy(kind="optimal")),
        None,
    ),
    "weights past 64 bits": (
        dict(player_dice={12: 10}, narrator_dice={12: 10}, consequence=1, pool={}, reserve={}),
        {},
        None,
    ),
    "rests forgotten on the way": (
        dict(ability=2, challenge=1, consequence=2, peril=1, pool={6: 2, 8: 2}, reserve={6: 1}),
        dict(rest_kept=40),
        None,
    ),
}


def _compiled_with(monkeypatch, model, **config):
    from exactdice.karbon import compiled

    with_defaults = compiled._config
    with monkeypatch.context() as patch, _walk("compiled"):
        patch.setattr(compiled, "_config", lambda *arguments: {**with_defaults(*arguments), **config})
        return explore(model(), max_states=_SUMMED_MOST_STATES, progress=False)


def _arrays(graph) -> tuple:
    return (
        list(graph.kind),
        list(graph.data),
        list(graph.offsets),
        list(graph.targets),
        list(graph.weights),
        [graph.chance_reward_mass[node] for node in range(graph.num_states)],
        graph.csr.big,
        graph.csr.big_mass,
        [
            (graph.action_names[edge], graph.action_rewards.get(edge))
            for node in range(graph.num_states)
            if graph.kind[node] == DECISION
            for edge in range(graph.offsets[node], graph.offsets[node + 1])
        ],
    )


@needs_compiled
@pytest.mark.parametrize("case", sorted(_SUMMED_SETUPS))
def test_summing_in_a_second_thread_gives_the_same_graph(case, monkeypatch):
    """Nodes summed and recorded by the summing thread from the first node on: the same
    arrays, node for node and edge for edge, as summed in the walk's own thread, and the
    Python walk's graph."""
    setup_kwargs, extra, split_rolls = _SUMMED_SETUPS[case]
    policies = {"player": PlayerPolicy(), "narrator": NarratorPolicy()}
    config = {name: value for name, value in extra.items() if name not in policies}
    policies.update({name: value for name, value in extra.items() if name in policies})
    setup = ContestSetup(**setup_kwargs)

    def model():
        return _model(setup, Rules(), policies["player"], policies["narrator"], split_rolls)

    with _walk("python"):
        reference = explore(model(), max_states=_SUMMED_MOST_STATES, workers=0, progress=False)
    in_one_thread = _compiled_with(monkeypatch, model, summing_after=-1, **config)
    in_two_threads = _compiled_with(monkeypatch, model, summing_after=0, **config)
    assert in_one_thread.owner.stats()["summed_in_thread"] == 0
    assert in_two_threads.owner.stats()["summed_in_thread"] > in_two_threads.num_states
    assert _arrays(in_two_threads) == _arrays(in_one_thread)
    assert _signature(in_two_threads) == _signature(reference)
    if case == "weights past 64 bits":
        assert any(weight > 2**63 for weight in in_two_threads.weights)


@needs_compiled
def test_an_error_in_the_summing_thread_reaches_the_caller():
    """Weights past 128 bits met while summing in the second thread: the error is the
    walk's, raised where it explores, and no thread is left."""
    import threading
    import traceback

    from exactdice.karbon import compiled
    from exactdice.karbon._walk import CompiledWalk, WalkOverflow

    setup = ContestSetup(player_dice={20: 5}, narrator_dice={20: 5}, consequence=1, peril=30, pool={}, reserve={})
    model = _model(setup, Rules(), PlayerPolicy(), NarratorPolicy())
    walk = CompiledWalk({**compiled._config(model, model), "summing_after": 0})
    with pytest.raises(WalkOverflow, match="pass 128 bits") as raised:
        walk.explore(model.initial_state(), 100_000)
    assert "exactdice.karbon._walk.CompiledWalk._summing_loop" in [
        frame.name for frame in traceback.extract_tb(raised.value.__traceback__)
    ]
    assert "exactdice-walk-summing" not in [thread.name for thread in threading.enumerate()]
    with pytest.raises(InternalError, match="cannot go on"):
        walk.expand_node(walk.nodes - 1)


@needs_compiled
def test_an_error_while_exploring_stops_the_summing_thread():
    """A check that raises (a memory or time limit, Ctrl-C) while the second thread sums:
    the error is raised, the thread stopped, and the walk says it cannot go on."""
    import threading

    from exactdice.karbon import compiled
    from exactdice.karbon._walk import CompiledWalk

    class Stop(Exception):
        pass

    def check(expanded, found):
        raise Stop

    setup = ContestSetup(ability=2, challenge=2, consequence=2, peril=1)
    model = _model(setup, Rules(), PlayerPolicy(), NarratorPolicy())
    walk = CompiledWalk({**compiled._config(model, model), "summing_after": 0})
    with pytest.raises(Stop):
        walk.explore(model.initial_state(), 100_000, check, check_every=64)
    assert "exactdice-walk-summing" not in [thread.name for thread in threading.enumerate()]
    assert walk.stats()["summed_in_thread"] > 0
    with pytest.raises(InternalError, match="cannot go on"):
        walk.expand_node(walk.nodes - 1)


@needs_compiled
@pytest.mark.parametrize("split_rolls", [False, True])
def test_the_summing_thread_sums_every_node_before_it_stops(split_rolls):
    """The last nodes are published just before the stop: the thread must sum them all. A
    small graph, explored hundreds of times with the thread from its first node, is whole
    every time (a thread that read the stop after a stale count left nodes unrecorded in
    about a third of such walks)."""
    from exactdice.karbon import compiled
    from exactdice.karbon._walk import CompiledWalk

    setup = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})
    model = _model(setup, Rules(), PlayerPolicy(), NarratorPolicy(), split_rolls)
    config = {**compiled._config(model, model), "summing_after": 0}
    for _ in range(300):
        walk = CompiledWalk(config)
        walk.explore(model.initial_state(), 10_000)
        assert walk.expanded == walk.nodes == walk.num_states
        assert walk.stats()["summed_in_thread"] > 0
