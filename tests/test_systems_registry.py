"""The registry's one shape refuses what it does not know: a misspelt parameter would
otherwise be left at its default and the answer silently wrong."""

from __future__ import annotations

import pytest

from exactdice.errors import InputError
from exactdice.systems import get_system, system_names


@pytest.mark.parametrize(
    "system, values, field, words",
    [
        ("karbon", {"sudden_death": "on"}, "sudden_death", "is not a parameter of karbon; its parameters:"),
        ("karbon", {"abilty": 3, "challenge": 2}, "abilty", 'did you mean "ability"?'),
        ("contingency", {"dice": "3d6", "difficulty": 4, "advantge": 1}, "advantge", 'did you mean "advantage"?'),
        ("chronica", {"sides": ("d6", "d6"), "tierule": "x"}, "tierule", 'did you mean "tie_rule"?'),
    ],
)
def test_an_unknown_parameter_is_refused_by_setup_and_rules(system, values, field, words):
    registered = get_system(system)
    for part in (registered.setup, registered.rules):
        with pytest.raises(InputError) as raised:
            part(values)
        assert raised.value.field == field and words in raised.value.message


def test_the_right_spelling_changes_the_answer():
    karbon = get_system("karbon")
    setup = karbon.setup({"ability": 3, "challenge": 2, "consequence": 2, "peril": 1})
    default = karbon.exact(setup, karbon.rules({}))
    sudden = karbon.exact(setup, karbon.rules({"rules": ["sudden_death=on"]}))
    assert default["tie"] > 0 == sudden.get("tie", 0)


def test_every_system_and_variant_refuses_a_name_it_does_not_declare():
    for name in system_names():
        system = get_system(name)
        for member in list(system.variants.values()) or [system]:
            with pytest.raises(InputError, match="is not a parameter"):
                member.setup({"no_such_parameter": 1})


def test_a_list_parameter_given_one_text_is_one_item_not_its_letters():
    karbon = get_system("karbon")
    assert karbon.rules({"rules": "sudden_death=on"}) == karbon.rules({"rules": ["sudden_death=on"]})
    chronica = get_system("chronica")
    assert chronica.setup({"sides": "d6"})["sides"] == ("d6",)


def test_on_off_knobs_take_true_and_false_and_lazy_names_are_listed():
    import exactdice.karbon
    from exactdice.karbon import Rules

    assert Rules(sudden_death=True) == Rules(sudden_death="on") and Rules(injury_peril=False) == Rules()
    with pytest.raises(InputError, match="tie_order takes player_first | narrator_first"):
        Rules(tie_order=True)
    assert {"contest_odds", "ContestOdds", "KarbonModel"} <= set(dir(exactdice.karbon))


def test_numpy_integers_and_paths_are_values_too_and_a_flag_name_points_to_its_parameter(tmp_path):
    import numpy as np

    from exactdice.chronica import solve_contest
    from exactdice.karbon import ContestSetup

    action = get_system("karst").variants["action"]
    assert action.setup({"modifier": np.int64(2)}) == {"modifier": 2}
    assert solve_contest([[(np.int64(8),)], [(6,)]]).win == solve_contest(["d8", "d6"]).win
    assert ContestSetup(ability=1, challenge=1, pool={6: np.int64(3)}) == ContestSetup(
        ability=1, challenge=1, pool="3d6"
    )
    karbon = get_system("karbon")
    assert karbon.setup({"state_file": tmp_path / "state.json"})["state_file"] == tmp_path / "state.json"
    with pytest.raises(InputError, match=r'vs: is not a parameter of opposed \(did you mean "versus"\?\)'):
        get_system("karst").variants["opposed"].setup({"vs": 2})
    with pytest.raises(InputError, match="give a list of sides"):
        solve_contest("d8,d6")


def test_none_leaves_a_parameter_to_its_default_and_floats_must_be_finite():
    import math

    from exactdice.systems import setup_values

    contingency = get_system("contingency")
    assert setup_values(contingency, {"dice": None})["dice"] == setup_values(contingency, {})["dice"] == "d6,d8,d10"
    limits = [parameter for parameter in get_system("karbon").parameters if parameter.kind is float]
    assert limits, "Karbon declares float limits (max_seconds)"
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(InputError, match="must be a finite number"):
            limits[0].check(value)
