"""A round start's edges (`RoundStartEdges`): the roll of both hands and then the rest of the
round after each roll outcome, compiled once into integer numerators over one denominator
and small int edge ids, so that summing a round start's edges adds integers by edge id.
"""

from __future__ import annotations

import math

from exactdice.errors import InternalError
from exactdice.karbon.model_branches import NO_REWARD, ONE_ROUND, unpack_rewards
from exactdice.karbon.model_rolls import roll_table
from exactdice.karbon.position import Position
from exactdice.markov.model import KeyedChance

__all__ = ["RoundStartEdges"]

# chips in a packed rest-of-round key (`_prepared_roll`): far more than any hand holds
_CHIPS_BITS = 40


class RoundStartEdges:
    """A round start's edges and the caches behind them, for `exactdice.karbon.model.KarbonModel`."""

    def _round_start_chance(self, position: Position) -> KeyedChance:
        """A round start's edges: the roll of both hands and, unless ``split_rolls``, the
        rest of the round (`_rest_of_round`), summed over the roll's outcomes.

        The rest of the round after each roll outcome is compiled once into integer
        numerators over one denominator and integer edge ids (`_edge_id`), so summing a
        round start's edges hashes small ints, not positions, and adds integers, not
        fractions. Weights come out over their smallest common denominator (gcd 1).

        With ``split_rolls`` each roll outcome leads to its risk situation as a node of
        its own: the same chain with one more step, so every exact value is unchanged.
        A round start's edges then number the roll's outcomes instead of outcomes times
        the rest of the round (risk dice, the dice taken, peril: hundreds of edges a
        state when the player risks), and round starts that reach the same post-roll
        situation share its node and its edges.
        """
        table = self._prepared_roll(position[0], position[1])
        if max(position[4], position[5]) >> (_CHIPS_BITS - 8):
            raise InternalError(f"chips in hand past 2**{_CHIPS_BITS - 8} in {position}")
        chips = position[4] << _CHIPS_BITS | position[5]
        unchanged = position[2:4] + position[6:]  # all but the hands and the chips
        compiled = self._rest_cache.get(unchanged)
        if compiled is None:
            compiled = self._rest_cache[unchanged] = {}
        # sums by edge id in a scratch list (faster than a dict), zero outside this call
        sums, touched = self._edge_sums, []
        try:
            common = 1
            for weight, entry_key, entry in table:
                rest = compiled.get(entry_key + chips)
                if rest is None:
                    rest = compiled[entry_key + chips] = self._rest_of_round(position, entry)
                if type(rest) is int:  # one edge, to the risk situation (`_rest_of_round`)
                    if not sums[rest]:
                        touched.append(rest)
                    sums[rest] += weight * common
                    continue
                rest_den, rest_edges = rest
                if rest_den == common:
                    factor = weight
                else:
                    if common % rest_den:
                        grown = math.lcm(common, rest_den)
                        scale, common = grown // common, grown
                        for edge in touched:
                            sums[edge] *= scale
                    factor = weight * (common // rest_den)
                for rest_num, edge in rest_edges:
                    total = sums[edge]
                    if not total:
                        touched.append(edge)
                    sums[edge] = total + factor * rest_num
            totals = [sums[edge] for edge in touched]
        finally:
            for edge in touched:
                sums[edge] = 0
        divisor = math.gcd(*totals)
        return KeyedChance(tuple(zip([total // divisor for total in totals], touched)), self._edge_keys)

    def _prepared_roll(self, player_hand, narrator_hand) -> tuple:
        """The roll table (`_roll_table`) as ``(weight, entry key, table entry)``.

        The entry key packs a number for the hands after the roll and the winner with
        the chips each side gains (`_CHIPS_BITS` bits each), so adding a round start's
        packed chips gives one int naming the situation after the roll."""
        key = (player_hand, narrator_hand)
        prepared = self._prepared_cache.get(key)
        if prepared is None:
            tokens = self._hands_tokens
            entries = []
            for entry in self._roll_table(player_hand, narrator_hand)[0]:
                weight, winner, gain_p, gain_n, after_player, after_narrator = entry
                token = tokens.setdefault((winner, after_player, after_narrator), len(tokens))
                entry_key = (token << 2 * _CHIPS_BITS) | (gain_p << _CHIPS_BITS) | gain_n
                entries.append((weight, entry_key, entry))
            prepared = self._prepared_cache[key] = tuple(entries)
        return prepared

    def _rest_of_round(self, position: Position, entry):
        """``(denominator, ((numerator, edge id), ...))``: the round from the roll outcome
        ``entry`` of ``position`` on, with the round's reward counted; with ``split_rolls``
        or a deciding player just the edge id of the risk situation."""
        # called on each miss of `_rest_cache`: past its bound the cache starts afresh
        # (exploring is breadth first, so what recurs is mostly recent); replaced, not
        # cleared, so the caller's entry goes into the dropped generation harmlessly
        self._rest_entries += 1
        if self._rest_entries > self.rest_entries_kept:
            self._rest_cache, self._rest_entries = {}, 0
        _, winner, gain_p, gain_n, player_hand, narrator_hand = entry
        situation = ("risk", self.after_roll(position, winner, gain_p, gain_n, player_hand, narrator_hand), winner)
        # with the cut after the roll, or where the risk decision (two options, always) is
        # the player's own node, the rest is one edge: its id alone (a tuple per key would
        # cost memory here)
        if self.split_rolls or self.player_decides:
            return self._edge_id(situation, ONE_ROUND)
        # keys before the stacks are folded into hand (`after_roll`) can name one situation
        rest = self._rest_by_situation.get(situation)
        if rest is None:
            branches: dict = {}
            self._walk(situation, 1, 1, NO_REWARD, branches)
            common = math.lcm(*(den for _, den in branches.values()))
            rest = (
                common,
                tuple(
                    (num * (common // den), self._edge_id(nxt, ONE_ROUND + reward))
                    for (nxt, reward), (num, den) in branches.items()
                ),
            )
            if len(self._rest_by_situation) >= self.rest_entries_kept:
                self._rest_by_situation.clear()
            self._rest_by_situation[situation] = rest
        return rest

    def _edge_id(self, situation, reward: int) -> int:
        """A small int naming (successor, packed reward): a round start's edges are summed by it."""
        key = (situation, reward)
        edge = self._edge_ids.get(key)
        if edge is None:
            edge = self._edge_ids[key] = len(self._edge_keys)
            self._edge_keys.append((situation, unpack_rewards(reward)))
            self._edge_sums.append(0)
        return edge

    def _roll_table(self, player_hand, narrator_hand):
        """`roll_table` of two hands, remembered by the model (`_roll_cache`)."""
        key = (player_hand, narrator_hand)
        cached = self._roll_cache.get(key)
        if cached is None:
            cached = self._roll_cache[key] = roll_table(player_hand, narrator_hand, self.sizes.sizes)
        return cached
