"""The draw as a decision (spec 3.1-3.2, section 7): the player's draw maximises over every
composition the pool and Fortune allow, the narrator's draw answers it.

Both draws become decision nodes in front of the contest's own graph, so one solve
shares every position reachable from several draws.
"""

from __future__ import annotations

import copy

from exactdice.karbon.dice import dice_text
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.markov import Chance, Decision
from exactdice.markov.bounded import choosing

__all__ = ["DrawSearchModel"]


class DrawSearchModel:
    """A `KarbonModel` preceded by the two draws (``("draw",)`` then ``("ndraw", text)``)."""

    def __init__(self, setup, ruleset, player, narrator):
        self.setup = setup
        self.player = player
        self.narrator = narrator
        self.sizes = setup.sizes()
        self.inner = KarbonModel(self.sizes, None, ruleset, player, narrator)
        self.outcomes = self.inner.outcomes
        self.reward_names = self.inner.reward_names
        if player.kind == "optimal":
            self.player_draws = setup.player_draws()
            if not self.player_draws:  # the fixed draw's message says why (pool, Fortune)
                setup.start(PlayerPolicy(), narrator)
        else:
            self.player_draws = [setup.start(player, narrator).player_draw]
        if narrator.kind in ("optimal", "kind") and not setup.narrator_draws(self.player_draws[0]):
            # no narrator draw is left after the player's: the fixed draw's message says why
            setup.start(PlayerPolicy(), NarratorPolicy(), self.player_draws[0], None)
        #: the player's draws by their text ("d8"): the names of the draw decision's actions
        self.draws_by_text = {dice_text(draw): draw for draw in self.player_draws}

    def with_draws(self, texts) -> "DrawSearchModel":
        """The same contest with the player's draw limited to ``texts`` (a part of the
        draw searched on its own: `exactdice.markov.bounded_split`).

        >>> from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
        >>> model = DrawSearchModel(ContestSetup(ability=1, challenge=1), Rules(), PlayerPolicy(kind="optimal"),
        ...                         NarratorPolicy())
        >>> sorted(model.draws_by_text), model.with_draws(["d10"]).initial_state()
        (['d10', 'd8'], ('ndraw', 'd10'))
        """
        unknown = set(texts) - set(self.draws_by_text)
        if unknown or not texts:
            raise ValueError(f"draws must be some of {sorted(self.draws_by_text)}, got {sorted(texts)}")
        part = copy.copy(self)
        part.player_draws = [draw for draw in self.player_draws if dice_text(draw) in texts]
        part.draws_by_text = {text: draw for text, draw in self.draws_by_text.items() if text in texts}
        return part

    def initial_state(self):
        if len(self.player_draws) == 1:
            return ("ndraw", dice_text(self.player_draws[0]))
        return ("draw",)

    def expand(self, situation):
        if situation == ("draw",):
            return Decision("max", tuple((text, ("ndraw", text), None) for text in self.draws_by_text))
        if type(situation) is tuple and situation[0] == "ndraw":
            player_draw = self.draws_by_text[situation[1]]
            if self.narrator.kind in ("optimal", "kind"):
                answers = self.setup.narrator_draws(player_draw)
                side = "max" if self.narrator.kind == "kind" else "min"
                actions = tuple((dice_text(answer), self._start(player_draw, answer), None) for answer in answers)
                if len(actions) > 1:
                    return Decision(side, actions)
                return Chance(((1, actions[0][1], None),))
            return Chance(((1, self._start(player_draw, None), None),))
        return self.inner.expand(situation)

    def explore_compiled(self, *, max_states: int, progress=None):
        """The draws and the contest explored by the compiled walk, or None (`KarbonModel`)."""
        from exactdice.karbon.compiled import explore_compiled

        return explore_compiled(self, max_states=max_states, progress=progress)

    def expand_keyed(self, situation):
        """`expand`, with the contest's round starts as `KeyedChance` nodes (for `explore`)."""
        if type(situation) is tuple and situation[0] in ("draw", "ndraw"):
            return self.expand(situation)
        return self.inner.expand_keyed(situation)

    def expand_choosing(self, situation, choose):
        """`KarbonModel.expand_choosing` behind the draws (for evaluating a strategy)."""
        if type(situation) is tuple and situation[0] in ("draw", "ndraw"):
            return choosing(situation, self.expand(situation), choose)
        return self.inner.expand_choosing(situation, choose)

    def _start(self, player_draw, narrator_draw):
        return self.inner.round_start(
            self.setup.start(self.player, self.narrator, player_draw, narrator_draw).situation()
        )

    def who_decides(self, situation) -> str:
        """ "player" or "narrator": who chooses at a decision situation."""
        if situation == ("draw",):
            return "player"
        if situation[0] == "ndraw":
            return "narrator"
        return self.inner.who_decides(situation)
