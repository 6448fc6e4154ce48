"""Karbon as a registered `exactdice.systems.RulesSystem`: one whole contest.

A setup holds the contest's draw (or explicit hands, or a state file) and both sides'
policies as text; `contest_from_values` turns it into the objects the exact model and the
simulator take. The exact model is imported only when `exact` is called.

>>> setup = SYSTEM.setup({"player_dice": "d6", "narrator_dice": "d10", "consequence": 1,
...                       "pool": "none", "reserve": "none"})
>>> law = SYSTEM.exact(setup, SYSTEM.rules({}))
>>> sum(law.values()), round(float(law["win"]), 6)
(Fraction(1, 1), 0.659757)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from exactdice.errors import InputError
from exactdice.karbon.dice import dice_text, parse_dice_list
from exactdice.karbon.policies import check_policy_dice, parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import RULE_CHOICES, Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE, ContestSetup, read_state_file
from exactdice.karbon.simulate import OUTCOME_COLUMN
from exactdice.systems import DeclaredSystem, Parameter, TableSet

__all__ = ["SYSTEM", "PARAMETERS", "contest_from_values", "ruleset_from_values", "TABLE_POLICIES"]

_RULES_HELP = "; ".join(f"{name}={'|'.join(values)}" for name, values in RULE_CHOICES.items())


def _knobs() -> dict:
    """Each rule knob's values (the spec's reading first) and what it decides, in words."""
    from exactdice.karbon.reading import KNOBS

    return {
        name: (
            values,
            f"{KNOBS[name][0]}: " + " | ".join(f"{value} = {meaning}" for value, meaning in KNOBS[name][1].items()),
        )
        for name, values in RULE_CHOICES.items()
    }


def _dice(name: str):
    """Reads a dice list, an error naming *name*."""
    return partial(parse_dice_list, field=name)


#: `contest_odds`'s state budget (its ``DEFAULT_MAX_STATES``, not imported here: the registry
#: loads no solver; a test checks they agree)
DEFAULT_MAX_STATES = 3_000_000
#: the most states any budget may name: no machine holds a trillion states (and the compiled
#: walk counts them in 64 bits)
MOST_STATES = 10**12
#: the page's ceiling of ``max_states``: the server's workers share one machine
PAGE_MAX_STATES = 20_000_000
#: seconds the page searches for certified bounds by default, and at most
PAGE_BOUNDS_SECONDS, PAGE_MAX_BOUNDS_SECONDS = 20, 600

#: a mid-contest position: (name, label, most on the page, help); with explicit hands
_POSITION = (
    ("player_chips", "Player chips", 100, "Chips in the player's hand."),
    ("narrator_chips", "Narrator chips", 100, "Chips in the narrator's hand."),
    ("player_stack", "Player stack", 4, "Chips on the player's stack (0-4)."),
    ("narrator_stack", "Narrator stack", 4, "Chips on the narrator's stack (0-4)."),
    ("wins", "Track X (wins)", 9, "Places the player has won on the track."),
    ("losses", "Track O (losses)", 9, "Places the player has lost on the track."),
)

PARAMETERS = (
    # (the setup's own limits, a hand's dice, the track, peril and fallout, are checked by
    # `ContestSetup` with their reasons; the page's are declared here)
    Parameter(
        "ability",
        int,
        None,
        "Dice the player draws (A >= 0).",
        short="-a",
        minimum=0,
        page_maximum=15,
        example=3,
        label="Ability (A)",
    ),
    Parameter(
        "challenge",
        int,
        None,
        "Dice the narrator draws (C >= 1).",
        short="-c",
        minimum=1,
        page_maximum=15,
        example=2,
        label="Challenge (C)",
    ),
    Parameter(
        "consequence",
        int,
        2,
        "Length W of the victory track.",
        short="-w",
        minimum=1,
        page_maximum=10,
        label="Consequence (W)",
    ),
    Parameter("peril", int, 0, "Starting peril dice P.", short="-p", minimum=0, page_maximum=10, label="Peril (P)"),
    Parameter(
        "fortune",
        int,
        0,
        "The player's Fortune F: each d6 it draws costs one.",
        minimum=0,
        page_maximum=15,
        label="Fortune (F)",
    ),
    Parameter("training", bool, False, "The player gains 1 chip per d8 drawn."),
    Parameter(
        "fallout",
        int,
        0,
        "Glitches thrown before the first round (Fallout K).",
        minimum=0,
        page_maximum=10,
        label="Fallout (K)",
    ),
    Parameter(
        "player_dice",
        str,
        None,
        "Explicit player hand, e.g. d8,d8,d10 or 2d8,d10 (no draw: instead of `ability` and `challenge`).",
        label="Player hand",
        section="hands",
        reader=_dice("player_dice"),
    ),
    Parameter(
        "narrator_dice",
        str,
        None,
        "Explicit narrator hand (with `player_dice`).",
        label="Narrator hand",
        section="hands",
        reader=_dice("narrator_dice"),
    ),
    Parameter(
        "draw_chips",
        bool,
        False,
        "With explicit hands: pay the draw's chips as if drawn.",
        label="Pay draw chips",
        section="hands",
    ),
    *(
        Parameter(
            name,
            int,
            0,
            f"A mid-contest position (with explicit hands): {words}",
            minimum=0,
            page_maximum=most,
            label=label,
            section="position",
        )
        for name, label, most, words in _POSITION
    ),
    Parameter(
        "pool",
        str,
        dice_text(DEFAULT_POOL),
        "The main pool (dice list, or none).",
        section="hands",
        reader=_dice("pool"),
    ),
    Parameter(
        "reserve",
        str,
        dice_text(DEFAULT_RESERVE),
        "The reserve (dice list, or none).",
        section="hands",
        reader=_dice("reserve"),
    ),
    Parameter(
        "state_file",
        str,
        None,
        "A mid-contest state as a JSON file (see the README); replaces the setup.",
        cli_flag="--state",
        on_page=False,
    ),
    Parameter(
        "player_policy",
        str,
        "fixed",
        '"optimal", or fixed preferences like '
        '"risk=always;break=advantage>security" (keys: draw, risk, risk_take, break, '
        "glitch, sideswipe_take).",
        section="policies",
        reader=parse_player_policy,
        presets=(
            ("fixed", "by the book (the fixed preferences)"),
            ("optimal", "optimal: the best choice every time"),
            ("risk=always", "by the book, but risks every round"),
        ),
    ),
    Parameter(
        "narrator_policy",
        str,
        "fixed",
        '"optimal", "kind" (plays for the player), '
        '"random" (coin flips for hurt and plans), or fixed preferences like '
        '"hurt=injury;plans=dice" (keys: draw, hurt, plans, plans_take, give).',
        section="policies",
        reader=parse_narrator_policy,
        presets=(
            ("fixed", "by the book (the fixed preferences)"),
            ("optimal", "optimal: plays against the player"),
            ("kind", "kind: plays for the player"),
            ("random", "coin flips for hurt and plans"),
        ),
    ),
    Parameter(
        "objective",
        str,
        None,
        "What optimal play maximises: expected score (win 1, "
        "tie 1/2) or P(win) alone (the same as `rules` objective=...).",
        choices=("score", "win"),
        role="rules",
        on_page=False,
    ),
    Parameter(
        "rules",
        str,
        (),
        f"Set a knob of the ruleset (repeatable). Knobs: {_RULES_HELP}.",
        multiple=True,
        role="rules",
        cli_flag="--rule",
        metavar="NAME=VALUE",
        section="rules",
        knobs=_knobs(),
    ),
    Parameter(
        "max_states",
        int,
        DEFAULT_MAX_STATES,
        "Stop exploring past this many states (the message says how many were reached).",
        role="limits",
        minimum=1,
        maximum=MOST_STATES,
        page_maximum=PAGE_MAX_STATES,
        label="Max states",
        section="limits",
    ),
    Parameter(
        "max_seconds",
        float,
        None,
        "With an optimal player: explore the exact game for at most a "
        "tenth of this (3 s without it), then answer with certified bounds searched for this long "
        "(the whole answer takes up to about 1.6 times this; 0: no bounds, the exact game or "
        "`max_states`' message). With bounds alone: stop the search after this many seconds.",
        role="limits",
        minimum=0,
        page_default=PAGE_BOUNDS_SECONDS,
        page_maximum=PAGE_MAX_BOUNDS_SECONDS,
        label="Bounds seconds",
        section="limits",
    ),
    Parameter("precision", float, 1e-3, "With bounds: stop once upper - lower <= this.", role="limits", on_page=False),
)

#: the setup parameters a state file replaces
DRAW_PARAMETERS = (
    "ability",
    "challenge",
    "consequence",
    "peril",
    "fortune",
    "training",
    "fallout",
    "player_dice",
    "narrator_dice",
    "draw_chips",
    "pool",
    "reserve",
) + tuple(name for name, *_ in _POSITION)

#: the parameters a table, a design or a sensitivity does not vary (an explicit draw, a
#: mid-contest position, a state file, an objective): its setups are the numbers' own
NOT_SWEPT_PARAMETERS = ("player_dice", "narrator_dice", "draw_chips", "state_file", "objective") + tuple(
    name for name, *_ in _POSITION
)

#: the policy pairs of the canonical tables: name -> (player, narrator)
TABLE_POLICIES = {"fixed": ("fixed", "fixed"), "optimal": ("optimal", "optimal")}


def ruleset_from_values(objective: str | None = None, rules=()) -> Rules:
    """`Rules` from ``NAME=VALUE`` knobs and an optional objective (they must agree).

    >>> ruleset_from_values("win", ["sudden_death=on"]).objective
    'win'
    """
    ruleset = Rules().with_rules(rules)
    if (
        objective
        and any(rule.replace(" ", "").startswith("objective=") for rule in rules)
        and ruleset.objective != objective
    ):
        raise InputError("objective", f"`objective` {objective} contradicts `rules` objective={ruleset.objective}")
    if objective:
        ruleset = ruleset.with_rules([f"objective={objective}"])
    return ruleset


def contest_from_values(setup: Mapping):
    """``(ContestSetup, player policy, narrator policy)`` from a setup mapping of text values.

    >>> contest, player, narrator = contest_from_values({"ability": 2, "challenge": 1})
    >>> contest.ability, player.kind, narrator.kind
    (2, 'fixed', 'fixed')
    """
    values = {parameter.name: parameter.default for parameter in PARAMETERS}
    values.update(setup)
    player = parse_player_policy(values["player_policy"])
    narrator = parse_narrator_policy(values["narrator_policy"])
    if values["state_file"]:
        contest = read_state_file(values["state_file"])
        check_policy_dice(player, narrator, contest.sizes().sizes)
        return contest, player, narrator
    hands = {
        name: parse_dice_list(values[name], name) if values[name] else None for name in ("player_dice", "narrator_dice")
    }
    position = {name: values[name] for name, *_ in _POSITION}
    if any(position.values()) and hands["player_dice"] is None and hands["narrator_dice"] is None:
        first = next(name for name, value in position.items() if value)
        raise InputError(
            first, "a mid-contest position needs explicit hands (`player_dice` and `narrator_dice`), as in a state file"
        )
    contest = ContestSetup(
        ability=values["ability"],
        challenge=values["challenge"],
        consequence=values["consequence"],
        peril=values["peril"],
        fortune=values["fortune"],
        training=values["training"],
        fallout=values["fallout"],
        draw_chips=values["draw_chips"],
        pool=parse_dice_list(values["pool"], "pool"),
        reserve=parse_dice_list(values["reserve"], "reserve"),
        **hands,
        **position,
    )
    check_policy_dice(player, narrator, contest.sizes().sizes)
    return contest, player, narrator


def _exact(setup: Mapping, rules: Rules) -> dict:
    from exactdice.karbon.solve import expected_distribution

    return expected_distribution(*_with_rules(contest_from_values(setup), rules))


def _simulate(setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
    from exactdice.karbon.simulate import simulate

    contest, ruleset, player, narrator = _with_rules(contest_from_values(setup), rules)
    return simulate(contest, ruleset, player, narrator, n=n, seed=seed)


def _column_distributions(setup: Mapping, rules: Rules) -> dict:
    """The exact laws of the count columns (fixed policies only; see `count_laws`)."""
    from exactdice.karbon.count_laws import column_distributions

    return column_distributions(*_with_rules(contest_from_values(setup), rules))


def _table_sets() -> list[TableSet]:
    from exactdice.karbon.tables import contest_grid

    sets = []
    for name, (player, narrator) in TABLE_POLICIES.items():
        words = "both sides optimal" if name == "optimal" else "both sides' fixed default policies"
        for consequence in (1, 2, 3):
            for peril in (0, 1):
                grid = contest_grid(
                    "ability",
                    list(range(1, 6)),
                    "challenge",
                    list(range(1, 6)),
                    {"consequence": consequence, "peril": peril},
                    player=player,
                    narrator=narrator,
                )
                sets.append(
                    TableSet(
                        "karbon",
                        f"ability_challenge_w{consequence}_p{peril}_{name}",
                        f"P(win), P(tie), P(loss) and expected rounds for Ability 1-5 x "
                        f"Challenge 1-5, Consequence W = {consequence}, Peril P = {peril}, "
                        f"{words}, default ruleset",
                        f"exactdice karbon table --ability 1-5 --challenge 1-5 --consequence "
                        f"{consequence} --peril {peril} --player-policy {player} "
                        f"--narrator-policy {narrator}",
                        (grid,),
                        tags=(name,),
                    )
                )
    return sets


def _with_rules(contest_and_policies, rules):
    contest, player, narrator = contest_and_policies
    return contest, rules, player, narrator


#: Karbon contests (spec ``karbon.md``), solved as a Markov state graph
SYSTEM = DeclaredSystem(
    "karbon",
    "Karbon contests: win, loss, tie or unfinished.",
    Rules,
    PARAMETERS,
    make_rules=ruleset_from_values,
    exact=_exact,
    simulate=_simulate,
    outcome=OUTCOME_COLUMN,
    column_distributions=_column_distributions,
    table_sets=_table_sets,
    task="Karbon contest",
    outcome_words=lambda outcome: {"unfinished": "never ends"}.get(outcome, OUTCOME_WORDS.get(outcome, outcome)),
)

#: a contest's outcomes in words (the simulator's ``unfinished`` is ``never_ends``)
OUTCOME_WORDS = {"win": "the player wins", "loss": "the player loses", "tie": "a tie", "never_ends": "never ends"}
