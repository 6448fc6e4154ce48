"""What a strategy of the "max" side is worth: the model with its choices fixed
(`StrategyModel`), solved exactly against the best reply (`evaluate_strategy`) within a
time limit (`TimeLimitedModel`), or where that solve passes its time a float lower bound
that rounding cannot make unsound (`sound_lower_value`).
"""

from __future__ import annotations

import time
from operator import mul

from exactdice.errors import InputError, TooLargeError
from exactdice.markov.graph import paused_gc
from exactdice.markov.model import Chance, Decision, keyed_expander
from exactdice.markov.sound_floats import UNIT_ROUNDOFF, chance_slack, float_payoffs

__all__ = [
    "StrategyModel",
    "choosing",
    "TimeLimitedModel",
    "StrategySolvePassedTime",
    "evaluate_strategy",
    "sound_lower_value",
]

_MAX_SOUND_SWEEPS = 100_000  # a loop's passes in `sound_lower_value` (any stop is sound)


class StrategyModel:
    """``model`` with the "max" side's decisions fixed: ``strategy[state]`` names the action
    where given, else ``default_action(state, names)`` returns the index of the action to
    take (default the first). The "min" side still chooses, so solving this model exactly
    gives the value the strategy guarantees against the best reply.

    A model may offer ``expand_choosing(state, choose)``: its ``expand_keyed`` (or
    ``expand``), except that at a "max" decision it calls ``choose(state, names)`` and
    returns a `Chance` of the one action named, without building the others (for Karbon,
    each action is a walk through the rules). Only the chosen action is then paid for.

    >>> from exactdice.markov.model import Decision, Terminal
    >>> class Pick:
    ...     outcomes, reward_names = ("win", "loss"), ()
    ...     def initial_state(self): return "start"
    ...     def expand(self, state):
    ...         if state == "start":
    ...             return Decision("max", (("lose", "loss", None), ("win", "win", None)))
    ...         return Terminal(state)
    >>> StrategyModel(Pick(), {"start": "win"}).expand("start").branches[0][1]
    'win'
    """

    def __init__(self, model, strategy: dict, default_action=None):
        self.model = model
        self.strategy = strategy
        self.default_action = default_action
        self.outcomes = model.outcomes
        self.reward_names = getattr(model, "reward_names", ())
        self.defaulted = 0
        self.chosen: dict = {}  # every "max" state expanded -> the action taken there
        self._expand_choosing = getattr(model, "expand_choosing", None)

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        return choosing(state, self.model.expand(state), self.choose)

    def expand_keyed(self, state):
        """`expand` passing the model's `KeyedChance` nodes through (for `explore`)."""
        if self._expand_choosing is not None:
            return self._expand_choosing(state, self.choose)
        return choosing(state, keyed_expander(self.model)(state), self.choose)

    def choose(self, state, names) -> str:
        """The name of the action the strategy (or the default) takes at ``state``."""
        name = self.strategy.get(state)
        if name is None:
            self.defaulted += 1
            name = names[self.default_action(state, names) if self.default_action is not None else 0]
        elif name not in names:
            raise InputError("strategy", f"action {name!r} is not available at {state!r}")
        self.chosen[state] = name
        return name


def choosing(state, node, choose):
    """``node``, or where it is a "max" `Decision`, a one-branch `Chance` of the action
    ``choose(state, names)`` names (a model's ``expand_choosing`` for nodes it builds whole).

    >>> choosing("s", Decision("max", (("a", 1, None), ("b", 2, None))), lambda state, names: "b")
    Chance(branches=((1, 2, None),))
    """
    if not isinstance(node, Decision) or node.side != "max":
        return node
    name = choose(state, [action[0] for action in node.actions])
    action = next(action for action in node.actions if action[0] == name)
    return Chance(((1, action[1], action[2]),))


class TimeLimitedModel:
    """``model`` whose ``expand`` raises `TooLargeError` (field "max_seconds") once
    ``seconds`` have passed since it was made: a time limit for an exact exploration.

    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> TimeLimitedModel(GamblersRuin(goal=3, start=1, up=1, down=1), 0).expand(1)
    Traceback (most recent call last):
    exactdice.errors.TooLargeError: max_seconds: exploring passed 0 s; give it more time
    """

    def __init__(self, model, seconds: float):
        self.model = model
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds
        self.outcomes = model.outcomes
        self.reward_names = getattr(model, "reward_names", ())

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        self._check_time()
        return self.model.expand(state)

    def expand_keyed(self, state):
        """`expand` passing the model's `KeyedChance` nodes through (for `explore`)."""
        self._check_time()
        return keyed_expander(self.model)(state)

    def explore_compiled(self, *, max_states: int, progress=None):
        """The model's own compiled exploring (`exactdice.markov.graph.explore`), within the
        time left (it checks the clock as it goes; past the deadline it raises here too);
        None where the model has none."""
        compiled = getattr(self.model, "explore_compiled", None)
        if compiled is None:
            return None
        self._check_time()
        graph = compiled(max_states=max_states, progress=progress)
        self._check_time()
        return graph

    def _check_time(self):
        if time.perf_counter() > self.deadline:
            raise TooLargeError("max_seconds", f"exploring passed {self.seconds:g} s; give it more time")


class StrategySolvePassedTime(TooLargeError):
    """`evaluate_strategy` explored the strategy's game but its exact solve passed the
    time: ``sound_lower`` is a float lower bound on the strategy's value, outward rounded
    (`sound_lower_value`), over the ``states`` of that game."""

    def __init__(self, field: str, message: str, sound_lower: float, states: int):
        super().__init__(field, message)
        self.sound_lower = sound_lower
        self.states = states


def evaluate_strategy(
    model,
    strategy: dict,
    *,
    default_action=None,
    payoff=None,
    nonterminating_payoff=0,
    max_states: int = 2_000_000,
    max_seconds: float | None = None,
    sound_seconds: float | None = None,
):
    """The exact value (a Fraction) the "max" strategy guarantees against the best reply of
    the "min" side, with the `Solution` (``played``: every "max" state reached -> its action;
    ``defaulted``: how many took the default); raises `TooLargeError` past ``max_states``
    (or when exploring and solving pass ``max_seconds``). With ``sound_seconds``, a solve
    that passes ``max_seconds`` after the exploring finished raises
    `StrategySolvePassedTime`, carrying a float lower bound on the value found in up to
    ``sound_seconds`` more.

    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> evaluate_strategy(GamblersRuin(goal=3, start=1, up=1, down=1), {})[0]
    Fraction(1, 3)
    """
    from exactdice.markov.graph import explore
    from exactdice.markov.solver import solve

    from exactdice.limits import time_limit

    fixed = StrategyModel(model, strategy, default_action)
    limited = fixed if max_seconds is None else TimeLimitedModel(fixed, max_seconds)
    passed = f"solving the strategy's game passed {max_seconds} s; give it more time"
    graph = components = None
    try:
        with time_limit(max_seconds, "max_seconds", passed):
            # in this process: the choices are recorded here (exploring workers would keep them)
            graph = explore(limited, max_states=max_states, progress=False, workers=0)
            components = graph.strongly_connected_components()
            solution = solve(
                graph, payoff=payoff, nonterminating_payoff=nonterminating_payoff, progress=False, components=components
            )
    except TooLargeError as error:
        if sound_seconds is None or graph is None or error.field != "max_seconds":
            raise
        with paused_gc():
            lower = sound_lower_value(
                graph,
                payoff=payoff,
                nonterminating_payoff=nonterminating_payoff,
                max_seconds=sound_seconds,
                components=components,
            )
        raise StrategySolvePassedTime(error.field, str(error).partition(": ")[2], lower, graph.num_states) from error
    solution.played = fixed.chosen  # type: ignore[attr-defined]  # what the strategy chose, for the caller
    solution.defaulted = fixed.defaulted  # type: ignore[attr-defined]
    return solution.value, solution


def sound_lower_value(
    graph, *, payoff=None, nonterminating_payoff=0, max_seconds: float | None = None, components=None
) -> float:
    """A float lower bound on the value of an explored game at its initial state, sound
    despite rounding: value iteration from below, component by component (sinks first),
    each chance sum widened downward by its rounding error bound (`chance_slack`). Every
    iterate stays below the value (the backup is monotone and the value its fixed point),
    so it may stop at any time (``max_seconds``); within a loop it stops once no state
    gains more than a few roundings (or after `_MAX_SOUND_SWEEPS` passes). Play that
    never ends counts at the least payoff here, which can only lower the bound.
    ``components``: the graph's strongly connected components, sinks first, if known.

    >>> from exactdice.markov.graph import explore
    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> value = sound_lower_value(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
    >>> value <= 1 / 3 and 1 / 3 - value < 1e-12
    True
    """
    from exactdice.markov.graph import CHANCE, DECISION, MAX, TERMINAL

    by_outcome, endless = float_payoffs(graph.outcomes, payoff, nonterminating_payoff)
    pays = [by_outcome[name] for name in graph.outcomes]
    least = min(pays + [endless])
    magnitude = max(abs(value) for value in pays + [least])
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    kind, data, offsets, targets, weights = graph.kind, graph.data, graph.offsets, graph.targets, graph.weights
    values = [least] * graph.num_states

    def move(node):
        """(targets, probabilities, slack) of a chance node; (targets, data) of another."""
        low, high = offsets[node], offsets[node + 1]
        if kind[node] == CHANCE:
            total = data[node]
            return (
                targets[low:high],
                [weight / total for weight in weights[low:high]],
                chance_slack(high - low, magnitude),
            )
        return targets[low:high], data[node]

    def backup(node, found):
        if kind[node] == TERMINAL:
            return pays[data[node]]
        if kind[node] == DECISION:
            chosen = max if found[1] == MAX else min
            return chosen([values[t] for t in found[0]])
        successors, probabilities, slack = found
        return max(least, sum(map(mul, probabilities, map(values.__getitem__, successors))) - slack)

    if components is None:
        components = graph.strongly_connected_components()
    for component in components:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if len(component) == 1 and component[0] not in graph.successors(component[0]):
            node = component[0]
            values[node] = max(values[node], backup(node, move(node)))
            continue
        moves = [(node, move(node)) for node in component]  # a loop's moves, built once for its passes
        for _ in range(_MAX_SOUND_SWEEPS):  # from below toward the component's least fixed point
            gained = 0.0
            for node, found in moves:
                new = backup(node, found)
                if new > values[node]:
                    gained = max(gained, new - values[node])
                    values[node] = new
            if gained <= 64 * UNIT_ROUNDOFF * magnitude or (deadline is not None and time.perf_counter() > deadline):
                break
    return values[graph.initial]
