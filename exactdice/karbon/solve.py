"""Exact odds of a Karbon contest: `contest_odds`.

>>> from exactdice.karbon.setup import ContestSetup
>>> odds = contest_odds(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1,
...                                  pool={}, reserve={}))
>>> odds.states, float(odds.win) > 0.65
(100, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from exactdice.core.display import counted, fraction_size, percent_text, significant_text, with_decimals
from exactdice.core.exact import fraction_text
from exactdice.karbon.dice import dice_text, parse_dice_list
from exactdice.karbon.draws import DrawSearchModel
from exactdice.karbon.model import REWARD_NAMES, KarbonModel
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import ContestSetup, ContestStart
from exactdice.limits import time_limit
from exactdice.markov import Solution, explore, solve
from exactdice.markov.graph import DECISION
from exactdice.markov.interval import certified_game, certified_solve

__all__ = ["ContestOdds", "contest_odds", "expected_distribution", "solve_start", "DEFAULT_MAX_STATES", "payoffs"]

DEFAULT_MAX_STATES = 3_000_000


@dataclass
class ContestOdds:
    """The exact result of one contest under a ruleset and two policies.

    Printed short (percentages with each fraction's size); every field holds the exact value.

    Attributes
    ----------
    win, loss, tie, never_ends : Fraction
        Exact probabilities summing to exactly 1 (``never_ends``: play in which no chip can
        ever be won again).
    expected_rounds, expected_breaks, expected_glitches, expected_injuries, expected_conditions : Fraction or None
        Exact expectations; None where play may never end.
    value : Fraction
        What optimal play maximises: the expected score (win 1, tie 1/2), or P(win) with
        ``objective=win``.
    states, transitions : int
        The size of the solved game.
    seconds : float
        Time the solve took.
    exact : bool
        False for certified floats (``arithmetic="float"``): each number is then a float
        inside its interval in ``bounds``.
    player_draw, narrator_draw : dict
        The hands drawn ({sides: count}; under an optimal player its best draw).
    ruleset : Rules
        The reading of the rules solved.
    player_policy, narrator_policy : PlayerPolicy, NarratorPolicy
        How each side played.
    setup : ContestSetup or None
        The setup solved.
    strategy : dict
        The optimal side's choice per decision state.
    solution : Solution or None
        The solver's full answer.
    model : KarbonModel or None
        The model solved.
    draw_values : dict or None
        With ``contest_odds(..., draw_values=True)``: the value of every player draw.
    bounds : dict or None
        With ``arithmetic="float"``: field name -> ``(low, high)``, floats that hold the
        exact value (``exactdice.markov.interval``), at most ``tolerance`` apart.
    tolerance : float or None
        The width asked of those intervals.
    """

    win: Fraction
    loss: Fraction
    tie: Fraction
    never_ends: Fraction
    expected_rounds: Fraction | None
    expected_breaks: Fraction | None
    expected_glitches: Fraction | None
    expected_injuries: Fraction | None
    expected_conditions: Fraction | None
    value: Fraction
    states: int
    transitions: int
    seconds: float
    exact: bool
    player_draw: dict
    narrator_draw: dict
    ruleset: Rules
    player_policy: PlayerPolicy
    narrator_policy: NarratorPolicy
    setup: ContestSetup | None = None
    strategy: dict = field(default_factory=dict, repr=False)
    solution: Solution | None = field(default=None, repr=False)
    model: KarbonModel | DrawSearchModel | None = field(default=None, repr=False)
    draw_values: dict | None = field(default=None, repr=False)
    bounds: dict | None = field(default=None, repr=False)
    tolerance: float | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """Short: each probability as a percentage with its fraction's size (the fields
        hold the exact values; a repr of hundreds of digits helps nobody at a prompt).

        >>> odds = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2}, reserve={}))
        >>> repr(odds).startswith("ContestOdds(win=51.0 % (31-digit fraction), loss=49.0 % (31-digit")
        True
        """

        def shown(value):
            if value is None or not self.exact:
                return "None" if value is None else f"{float(value):.6g}"
            size = fraction_size(value)
            return f"{percent_text(value)} ({fraction_text(value) if size <= 12 else f'{size}-digit fraction'})"

        def number(value):
            return "None" if value is None else significant_text(value) if self.exact else f"{float(value):.6g}"

        odds = ", ".join(f"{name}={shown(getattr(self, name))}" for name in ("win", "loss", "tie", "never_ends"))
        counts = ", ".join(
            f"{name}={number(getattr(self, name))}"
            for name in (
                "expected_rounds",
                "expected_breaks",
                "expected_glitches",
                "expected_injuries",
                "expected_conditions",
            )
        )
        return (
            f"ContestOdds({odds}, {counts}, states={self.states}, transitions={self.transitions}, exact={self.exact})"
        )

    def to_json(self) -> dict:
        """The ``--json`` document: exact numbers as ``"p/q"`` strings, and a ``decimal``
        object repeating each of them as a float (`exactdice.core.display.with_decimals`)."""

        def exact(value):
            if value is None:
                return None
            return fraction_text(value) if self.exact else float(value)

        result = {
            "win": exact(self.win),
            "loss": exact(self.loss),
            "tie": exact(self.tie),
            "never_ends": exact(self.never_ends),
            "expected_rounds": exact(self.expected_rounds),
            "expected_breaks": exact(self.expected_breaks),
            "expected_glitches": exact(self.expected_glitches),
            "expected_injuries": exact(self.expected_injuries),
            "expected_conditions": exact(self.expected_conditions),
            "states": self.states,
            "transitions": self.transitions,
            "seconds": round(self.seconds, 3),
            "draws": {"player": dice_text(self.player_draw), "narrator": dice_text(self.narrator_draw)},
            "exact": self.exact,
            "ruleset": self.ruleset.to_dict(),
            "policies": {"player": self.player_policy.text(), "narrator": self.narrator_policy.text()},
        }
        if self.bounds is not None:
            result["certified"] = {
                "tolerance": self.tolerance,
                "bounds": {
                    name: None if interval is None else list(interval) for name, interval in self.bounds.items()
                },
            }
        if self.setup is not None:
            result["setup"] = self.setup.to_dict()
        return with_decimals(result)


def payoffs(ruleset: Rules) -> tuple[dict, Fraction]:
    """(payoff per outcome, payoff of never-ending play) for the ruleset's objective.

    >>> payoffs(Rules())[0]["tie"]
    Fraction(1, 2)
    """
    tie = Fraction(1, 2) if ruleset.objective == "score" else Fraction(0)
    return {"win": Fraction(1), "loss": Fraction(0), "tie": tie}, tie


def solve_start(
    start: ContestStart, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy, **options
) -> ContestOdds:
    """Solve the contest from a prepared start (draws already made)."""
    model = KarbonModel(start.sizes, start.situation(), ruleset, player, narrator)
    return _solve_model(model, ruleset, player, narrator, draws=(start.player_draw, start.narrator_draw), **options)


def _solve_model(
    model,
    ruleset,
    player,
    narrator,
    *,
    draws=None,
    arithmetic: str = "exact",
    max_states: int = DEFAULT_MAX_STATES,
    explore_seconds: float | None = None,
    progress=None,
    all_states: bool = False,
    setup: ContestSetup | None = None,
    draw_values: bool = False,
) -> ContestOdds:
    began = time.perf_counter()
    passed = f"more than {explore_seconds:g} s of exploring" if explore_seconds is not None else ""
    with time_limit(explore_seconds, "explore_seconds", passed):
        graph = explore(model, max_states=max_states, progress=progress)
    payoff, endless = payoffs(ruleset)
    bookkeeping = getattr(graph, "bookkeeping", None)
    if bookkeeping is None:
        bookkeeping = sum(1 for state in graph.states if type(state) is tuple and state[0] in ("end", "draw", "ndraw"))
    if arithmetic == "float":
        return _certified(graph, payoff, endless, began, draws, bookkeeping, ruleset, player, narrator, setup, model)
    solution = solve(
        graph,
        payoff=payoff,
        nonterminating_payoff=endless,
        arithmetic=arithmetic,
        progress=progress,
        all_states=all_states or draw_values,
    )
    absorption = solution.absorption
    rewards = solution.expected_rewards or {}
    values = None
    if draws is None:  # the draws were decisions: read them off the strategy
        player_text = solution.strategy.get(("draw",)) or model.initial_state()[1]
        narrator_text = solution.strategy.get(("ndraw", player_text))
        start = model.setup.start(
            player,
            narrator,
            model.draws_by_text[player_text],
            parse_dice_list(narrator_text, "draw") if narrator_text else None,
        )
        draws = (start.player_draw, start.narrator_draw)
        if draw_values:
            values = {text: solution.state_value(("ndraw", text)) for text in model.draws_by_text}
    return ContestOdds(
        win=absorption.get("win", 0),
        loss=absorption.get("loss", 0),
        tie=absorption.get("tie", 0),
        never_ends=solution.never_ends,
        value=solution.value,
        expected_rounds=rewards.get("rounds"),
        expected_breaks=rewards.get("breaks"),
        expected_glitches=rewards.get("glitches"),
        expected_injuries=rewards.get("injuries"),
        expected_conditions=rewards.get("conditions"),
        states=graph.num_states - bookkeeping,
        transitions=graph.num_transitions,
        seconds=time.perf_counter() - began,
        exact=solution.exact,
        player_draw=draws[0],
        narrator_draw=draws[1],
        ruleset=ruleset,
        player_policy=player,
        narrator_policy=narrator,
        setup=setup,
        strategy=solution.strategy,
        solution=solution,
        model=model,
        draw_values=values,
    )


def _certified(
    graph, payoff, endless, began, draws, bookkeeping, ruleset, player, narrator, setup, model
) -> ContestOdds:
    """Certified floats: each number the middle of an interval that holds the exact value
    (`exactdice.markov.interval`). Under optimal play the value's interval is the game's;
    the odds and expectations are those of the strategies found (each side's choices best
    for its bounds), and the draws those they take. (A contest counts its rounds as a
    reward: the chance steps are not bounded.)"""
    if DECISION in graph.kind:
        answer = certified_game(graph, payoff=payoff, nonterminating_payoff=endless, steps=False)
        if draws is None:
            draws = _certified_draws(graph, answer.strategy, model, player, narrator)
    else:
        answer = certified_solve(graph, payoff=payoff, nonterminating_payoff=endless, steps=False)
    bounds = {name: answer.absorption[name] for name in ("win", "loss", "tie")}
    bounds["never_ends"] = answer.never_ends
    bounds["value"] = answer.value
    for name in REWARD_NAMES:
        bounds[f"expected_{name}"] = answer.expected_rewards.get(name)

    def middle(name):
        interval = bounds[name]
        return None if interval is None else (interval[0] + interval[1]) / 2

    return ContestOdds(
        win=middle("win"),
        loss=middle("loss"),
        tie=middle("tie"),
        never_ends=middle("never_ends"),
        value=middle("value"),
        expected_rounds=middle("expected_rounds"),
        expected_breaks=middle("expected_breaks"),
        expected_glitches=middle("expected_glitches"),
        expected_injuries=middle("expected_injuries"),
        expected_conditions=middle("expected_conditions"),
        states=graph.num_states - bookkeeping,
        transitions=graph.num_transitions,
        seconds=time.perf_counter() - began,
        exact=False,
        player_draw=draws[0],
        narrator_draw=draws[1],
        ruleset=ruleset,
        player_policy=player,
        narrator_policy=narrator,
        setup=setup,
        model=model,
        bounds=bounds,
        tolerance=answer.tolerance,
    )


def _certified_draws(graph, strategy, model, player, narrator):
    """The hands the strategies found draw (``strategy``: decision node -> edge)."""

    def taken(state):
        node = graph.index.get(state)
        return graph.action_names[strategy[node]] if node is not None and node in strategy else None

    player_text = taken(("draw",)) or model.initial_state()[1]
    narrator_text = taken(("ndraw", player_text))
    start = model.setup.start(
        player,
        narrator,
        model.draws_by_text[player_text],
        parse_dice_list(narrator_text, "draw") if narrator_text else None,
    )
    return start.player_draw, start.narrator_draw


def contest_odds(
    setup: ContestSetup,
    ruleset: Rules | None = None,
    player: PlayerPolicy | None = None,
    narrator: NarratorPolicy | None = None,
    *,
    arithmetic: str = "exact",
    max_states: int = DEFAULT_MAX_STATES,
    explore_seconds: float | None = None,
    progress: bool | None = None,
    all_states: bool = False,
    draw_values: bool = False,
) -> ContestOdds:
    """Exact win/loss/tie odds (and expectations) of a contest under two policies.

    Fixed policies draw by their preferences; an ``optimal`` player searches every draw
    the pool and Fortune allow and an ``optimal``/``kind`` narrator answers each one
    (`exactdice.karbon.draws`).

    The cost follows what hands can become: the fixed preferences keep them small (hundreds
    to tens of thousands of states), while ``risk=always`` or optimal play on the default
    pool reaches millions (minutes and gigabytes exactly; ``arithmetic="float"`` certifies
    floats sooner, and `exactdice.answers.karbon_odds` gives an optimal player bounds).
    ``max_states`` and the memory budget stop it with a message.

    Parameters
    ----------
    setup : ContestSetup
        The contest.
    ruleset : Rules, optional
        The reading of the rules (default: `Rules()`, the spec's defaults).
    player : PlayerPolicy, optional
        The player's policy (default: the fixed preferences).
    narrator : NarratorPolicy, optional
        The narrator's policy (default: the fixed preferences).
    arithmetic : {"exact", "float"}
        Exact rationals, or a float preview.
    max_states : int, default 3,000,000
        Stop exploring past this many states.
    explore_seconds : float, optional
        Stop exploring after this many seconds (where bounds can answer instead,
        `exactdice.karbon.bounds`, a caller need not wait for the whole state budget).
    progress : bool, optional
        Progress bars on stderr: True always, False never, None (the default) when stderr
        is a terminal and the game is large.
    all_states : bool, default False
        Keep every state's answer (for per-state values and ``--explain``).
    draw_values : bool, default False
        Also give the value of every player draw.

    Returns
    -------
    ContestOdds
        The exact odds, expectations, draws, strategy and size of the solve.

    Raises
    ------
    TooLargeError
        Exploring past *max_states* states or *explore_seconds* seconds (field
        ``max_states`` or ``explore_seconds``).
    InputError
        A setup the pool cannot supply, or a bad argument.

    Examples
    --------
    >>> odds = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1))
    >>> odds.win + odds.loss + odds.tie + odds.never_ends
    Fraction(1, 1)
    """
    ruleset = ruleset or Rules()
    player = player or PlayerPolicy()
    narrator = narrator or NarratorPolicy()
    options = dict(
        arithmetic=arithmetic,
        max_states=max_states,
        explore_seconds=explore_seconds,
        progress=progress,
        all_states=all_states,
        setup=setup,
    )
    searching = player.kind == "optimal" or narrator.kind in ("optimal", "kind")
    if setup.player_dice is None and searching:
        model = DrawSearchModel(setup, ruleset, player, narrator)
        return _solve_model(model, ruleset, player, narrator, draw_values=draw_values, **options)
    return solve_start(setup.start(player, narrator), ruleset, player, narrator, **options)


def explain_first_round(result: ContestOdds, digits: int = 3) -> list[str]:
    """The optimal player's first-round risk decisions in plain words, with what each
    alternative would give (P(win) and the expected score the player maximises).

    Needs a result solved with ``all_states=True`` under an ``optimal`` player.
    """
    model, solution = result.model, result.solution
    inner = getattr(model, "inner", model)
    sizes = inner.sizes
    objective = "P(win)" if result.ruleset.objective == "win" else "expected score (win 1, tie 1/2)"
    lines = []
    if isinstance(model, DrawSearchModel) and result.draw_values:
        ranked = sorted(result.draw_values.items(), key=lambda item: -item[1])
        lines.append(
            f"Draw: takes {dice_text(result.player_draw)}; {objective} of each draw: "
            + ", ".join(f"{text} {significant_text(value, digits)}" for text, value in ranked)
            + "."
        )
    setup = result.setup
    start = setup.start(
        result.player_policy,
        result.narrator_policy,
        result.player_draw if setup.player_dice is None else None,
        result.narrator_draw if setup.player_dice is None else None,
    )
    position = inner.round_start(start.position)
    if start.fallout:
        lines.append("(Fallout Glitches come before the first round; the explanation starts after them.)")
        return lines
    table, roll_den = inner._roll_table(position.player_hand, position.narrator_hand)
    who = {"p": "the player wins the roll", "n": "the narrator wins the roll", "t": "a tie"}
    doing = {"yes": "risking", "no": "not risking"}
    for weight, winner, gain_p, gain_n, player_hand, narrator_hand in sorted(table, key=lambda entry: -entry[0]):
        situation = ("risk", inner.after_roll(position, winner, gain_p, gain_n, player_hand, narrator_hand), winner)
        if situation not in solution.strategy:
            continue
        _, options = inner._decision(situation)
        values, win = {}, {}
        for name, nxt, reward in options:
            target = inner._action(name, nxt, reward)[1]
            values[name] = solution.state_value(target)
            win[name] = solution.state_absorption(target).get("win", 0)
        chosen = solution.strategy[situation]
        other = "no" if chosen == "yes" else "yes"
        hits = (
            f"{counted(gain_p, 'hit')} each"
            if winner == "t"
            else f"with {counted(gain_p if winner == 'p' else gain_n, 'hit')}"
        )
        if player_hand != position.player_hand:
            moved = [a - b for a, b in zip(player_hand, position.player_hand)]
            towards = "player" if sum(moved) > 0 else "narrator"
            opening = f"an Opening gives {sizes.text(tuple(abs(m) for m in moved))} to the {towards}"
        else:
            opening = "no Opening"
        reason = "gives" if values[chosen] > values[other] else "gives as much,"
        lines.append(
            f"{percent_text(Fraction(weight, roll_den), digits)} of first rolls: {who[winner]} ({hits}), "
            f"{opening}. Risk: {chosen}. {doing[chosen].capitalize()} {reason} P(win) "
            f"{percent_text(win[chosen], digits)} (score {significant_text(values[chosen], digits)}); "
            f"{doing[other]} would give {percent_text(win[other], digits)} "
            f"(score {significant_text(values[other], digits)})."
        )
    return lines


def expected_distribution(
    setup: ContestSetup,
    ruleset: Rules | None = None,
    player: PlayerPolicy | None = None,
    narrator: NarratorPolicy | None = None,
) -> dict[str, Fraction]:
    """Exact P(outcome) of the simulator's ``outcome`` column (``unfinished`` = never ends).

    Parameters
    ----------
    setup : ContestSetup
        The contest.
    ruleset : Rules, optional
        The reading of the rules (default: the spec's).
    player, narrator : PlayerPolicy, NarratorPolicy, optional
        The policies (default: the fixed preferences).

    Returns
    -------
    dict of str to Fraction
        ``win``, ``loss``, ``tie`` and ``unfinished``, summing to exactly 1.

    Examples
    --------
    >>> from exactdice.karbon.setup import ContestSetup
    >>> law = expected_distribution(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1},
    ...                                          consequence=1, pool={}, reserve={}))
    >>> sum(law.values()), round(float(law["win"]), 6)
    (Fraction(1, 1), 0.659757)
    """
    odds = contest_odds(setup, ruleset, player, narrator)
    return {"win": odds.win, "loss": odds.loss, "tie": odds.tie, "unfinished": odds.never_ends}
