"""Regenerated system tables, checked cell by cell against each system's exact functions
and against brute-force enumeration of every face."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import pytest
from click.testing import CliRunner


def _table_json(command, *arguments):
    result = CliRunner().invoke(command, [*arguments, "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["tables"]


def _matrix(table, metric_name):
    metric = next(m for m in table["metrics"] if m["name"] == metric_name)
    return [[None if v is None else Fraction(v) for v in row] for row in metric["exact"]]


def _brute_force(sides_list, predicate):
    """P(predicate(faces)) over every combination of faces of the given dice."""
    outcomes = list(itertools.product(*(range(1, sides + 1) for sides in sides_list)))
    return Fraction(sum(1 for faces in outcomes if predicate(faces)), len(outcomes))


class TestKarst:
    karst = pytest.importorskip("exactdice.karst.tables")

    def _command(self):
        from exactdice.cli.table_commands import karst_table

        return karst_table

    def test_attack_table_matches_attack_hit_and_every_d20_face(self):
        from exactdice.karst import attack_hit

        (table,) = _table_json(self._command(), "--table", "attack")
        modifiers = [int(label) for label in table["rows"]]
        defenses = [int(label) for label in table["columns"]]
        assert modifiers == list(range(-2, 11)) and defenses == list(range(8, 21))
        hits = _matrix(table, "P(hit)")
        for r, modifier in enumerate(modifiers):
            for c, defense in enumerate(defenses):
                brute = _brute_force([20], lambda f: f[0] == 20 or (f[0] != 1 and f[0] + modifier >= defense))
                assert hits[r][c] == attack_hit(modifier, defense) == brute

    def test_action_table_matches_every_d6_face(self):
        from exactdice.karst import action_success

        (table,) = _table_json(self._command(), "--table", "action")
        assert table["rows"] == [f"{m:+d}" for m in range(-5, 6)]
        for (value,), label in zip(_matrix(table, "P(success)"), table["rows"]):
            modifier = int(label)
            brute = _brute_force([6], lambda f: f[0] == 6 or (f[0] != 1 and f[0] + modifier >= 6))
            assert value == action_success(modifier) == brute

    @pytest.mark.parametrize("modifier", [0, 2])
    def test_death_table_matches_solve_death(self, modifier):
        from exactdice.karst import Rules, solve_death

        (table,) = _table_json(self._command(), "--table", "death", "--modifier", str(modifier))
        assert table["legend"]["modifier"] == f"{modifier:+d}"
        death, rounds = _matrix(table, "P(death)"), _matrix(table, "expected rounds")
        for r, h in enumerate(int(label) for label in table["rows"]):
            for c, aid in enumerate(int(label) for label in table["columns"]):
                solution = solve_death(h, modifier, Rules(aid=aid))
                assert death[r][c] == solution.death and rounds[r][c] == solution.expected_rounds
        if modifier == 0:
            assert death[2][0] == Fraction(3, 4)  # the spec's micro-example


class TestContingency:
    contingency = pytest.importorskip("exactdice.contingency.tables")

    @pytest.mark.parametrize("kind, pick", [("normal", 1), ("advantage", 2), ("disadvantage", 0)])
    def test_difficulty_table_matches_solve_check_and_brute_force(self, kind, pick):
        from exactdice.cli.table_commands import contingency_table
        from exactdice.contingency import skill_check, solve_check

        (table,) = _table_json(contingency_table, "--kind", kind)
        assert len(table["rows"]) == 35 and len(table["columns"]) == 11
        success = _matrix(table, "P(success)")
        advantage, disadvantage = {"normal": (0, 0), "advantage": (1, 0), "disadvantage": (0, 1)}[kind]
        for r, label in enumerate(table["rows"]):
            pool = [int(die.lstrip("d")) for die in label.split(",")]

            def result_face(faces):
                # sort by face, ties by die size; take the middle (or highest / lowest)
                ordered = sorted(zip(faces, pool))
                return ordered[pick][0]

            for c, column in enumerate(table["columns"]):
                difficulty = int(column.split()[0])
                brute = _brute_force(pool, lambda faces: result_face(faces) >= difficulty)
                assert success[r][c] == brute, (label, column)
                if r % 7 == 0:  # the system's own entry point, on a sample of pools
                    solution = solve_check(
                        skill_check(pool, advantage=advantage, disadvantage=disadvantage, difficulty=difficulty)
                    )
                    assert success[r][c] == solution.outcome_probabilities()["success"]


def _chronica_brute_force(player, opposition):
    """(P(win), P(tie), E[player's success dice]) of one pool against one pool, every face listed.

    Highest dice are compared; equal ones are both discarded; a side out of dice shows 0.
    """
    win = tie = success = 0
    outcomes = list(itertools.product(*(range(1, n + 1) for n in player + opposition)))
    for faces in outcomes:
        mine = sorted(faces[: len(player)], reverse=True)
        theirs = sorted(faces[len(player) :], reverse=True)
        while mine and theirs and mine[0] == theirs[0]:
            mine, theirs = mine[1:], theirs[1:]
        if not mine and not theirs:
            tie += 1
        elif mine and (not theirs or mine[0] > theirs[0]):
            win += 1
            best_loser = theirs[0] if theirs else 0
            success += sum(1 for face in mine if face > best_loser)
    total = len(outcomes)
    return Fraction(win, total), Fraction(tie, total), Fraction(success, total)


class TestChronica:
    chronica = pytest.importorskip("exactdice.chronica.tables")

    @pytest.mark.parametrize("player_dice", [1, 2])
    def test_difficulty_table_matches_solve_contest_and_brute_force(self, player_dice):
        from exactdice.chronica.contest import solve_contest
        from exactdice.cli.table_commands import chronica_table

        (table,) = _table_json(chronica_table, "--player-dice", str(player_dice))
        assert table["columns"] == ["3d4", "3d6", "3d8", "3d10", "3d12"]
        win, tie, success = (_matrix(table, name) for name in ("P(win)", "P(tie)", "E[success dice]"))
        checked = 0
        for r, label in enumerate(table["rows"]):
            pool = tuple(
                size
                for part in label.split(",")
                for size in [int(part.split("d")[1])] * (int(part.split("d")[0]) if part.split("d")[0] else 1)
            )
            assert len(pool) == player_dice
            for c, column in enumerate(table["columns"]):
                opposition = (int(column[2:]),) * 3
                if max(pool + opposition) <= 8:
                    assert (win[r][c], tie[r][c], success[r][c]) == _chronica_brute_force(pool, opposition)
                    checked += 1
                result = solve_contest([(pool,), (opposition,)])
                assert win[r][c] == result.win[0] and tie[r][c] == result.tie
        assert checked >= 6

    def test_knobs_reach_the_table(self):
        from exactdice.cli.table_commands import chronica_table

        # three dice against three can tie; a push re-rolls ties, so fewer remain
        (plain,) = _table_json(chronica_table, "--player-dice", "3")
        (pushed,) = _table_json(chronica_table, "--player-dice", "3", "--push")
        assert _matrix(plain, "P(tie)") != _matrix(pushed, "P(tie)")
        assert "push on" in pushed["legend"]["rules"]


class TestKarbon:
    karbon = pytest.importorskip("exactdice.karbon.tables")

    def test_a_small_grid_through_the_store_matches_contest_odds(self, tmp_path):
        from exactdice.karbon import ContestSetup, contest_odds
        from exactdice.tables.export import render_table
        from exactdice.tables.jobs import solve_tables
        from exactdice.tables.store import ResultStore

        grid_spec = self.karbon.contest_grid("ability", [1, 2], "challenge", [1, 2], {"consequence": 1, "peril": 0})
        with ResultStore(tmp_path / "r.sqlite") as store:
            (grid,) = solve_tables([grid_spec], store=store, workers=2, progress=False)
            assert len(store) == 4
        assert list(grid.metrics)[0] == "P(win)"
        document = json.loads(render_table(grid, "json"))["tables"][0]
        win, tie, loss = (_matrix(document, name) for name in ("P(win)", "P(tie)", "P(loss)"))
        for r, ability in enumerate((1, 2)):
            for c, challenge in enumerate((1, 2)):
                odds = contest_odds(ContestSetup(ability=ability, challenge=challenge, consequence=1, peril=0))
                assert (win[r][c], tie[r][c], loss[r][c]) == (odds.win, odds.tie, odds.loss)
