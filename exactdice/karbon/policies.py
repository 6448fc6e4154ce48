"""Who decides what, and how (spec section 7).

A policy is ``optimal``, ``kind`` (narrator only: plays for the player), ``random``
(narrator only: coin flips for hurt and plans) or a **fixed preference**, written as
``key=value`` pairs joined by ``;`` naming only the keys that differ from the defaults.

>>> parse_player_policy("risk=always;break=advantage>security").break_order[:2]
('advantage', 'security')
>>> parse_narrator_policy("random").kind
'random'
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from exactdice.errors import InputError

__all__ = [
    "PlayerPolicy",
    "NarratorPolicy",
    "parse_player_policy",
    "parse_narrator_policy",
    "check_policy_dice",
    "BREAK_OPTIONS",
    "GLITCH_OPTIONS",
]

BREAK_OPTIONS = ("security", "footing-discard", "footing-dice", "advantage")
GLITCH_OPTIONS = ("hurt", "plans", "sideswipe")


@dataclass(frozen=True)
class PlayerPolicy:
    """The player's policy; the preference fields are used when ``kind == "fixed"``.

    Parameters
    ----------
    kind : {"fixed", "optimal"}
        Fixed preferences, or optimal play.
    draw : tuple of int, default (6, 8, 10)
        Die sizes in the order the player draws them (d6 while Fortune lasts).
    risk : {"never", "always"}
        Whether the player risks after the roll.
    risk_take : tuple of int, default (6, 8, 10)
        Die sizes in the order risk hits take them from the pool.
    break_order : tuple of str
        The Break options in order of preference (security, footing-discard, footing-dice,
        advantage).
    glitch_order : tuple of str
        The Glitch options in order of preference (hurt, plans, sideswipe).
    sideswipe_take : {"dice", "chips"}
        What a sideswipe takes from the narrator.
    """

    kind: str = "fixed"
    draw: tuple[int, ...] = (6, 8, 10)
    risk: str = "never"
    risk_take: tuple[int, ...] = (6, 8, 10)
    break_order: tuple[str, ...] = BREAK_OPTIONS
    glitch_order: tuple[str, ...] = GLITCH_OPTIONS
    sideswipe_take: str = "dice"

    def text(self) -> str:
        """The policy written back in the CLI's syntax."""
        if self.kind != "fixed":
            return self.kind
        return ";".join(
            [
                f"draw={_dice_pref(self.draw)}",
                f"risk={self.risk}",
                f"risk_take={_dice_pref(self.risk_take)}",
                f"break={'>'.join(self.break_order)}",
                f"glitch={'>'.join(self.glitch_order)}",
                f"sideswipe_take={self.sideswipe_take}",
            ]
        )

    def words(self) -> str:
        """The policy in plain words (the text output; `text` stays the compact form).

        >>> PlayerPolicy().words()
        'draws d6 (while Fortune lasts), then d8, d10; never risks; Break: security, else footing-discard, else footing-dice, else advantage; Glitch: hurt, else plans, else sideswipe; a sideswipe takes dice'
        """
        if self.kind == "optimal":
            return "plays optimally (every choice maximises the objective)"
        risk = (
            "never risks"
            if self.risk == "never"
            else f"always risks, taking {_dice_words(self.risk_take)} with risk hits"
        )
        return "; ".join(
            [
                f"draws {_dice_words(self.draw, fortune=True)}",
                risk,
                f"Break: {', else '.join(self.break_order)}",
                f"Glitch: {', else '.join(self.glitch_order)}",
                f"a sideswipe takes {self.sideswipe_take}",
            ]
        )


@dataclass(frozen=True)
class NarratorPolicy:
    """The narrator's policy; the preference fields serve ``fixed`` and ``random``.

    Parameters
    ----------
    kind : {"fixed", "optimal", "kind", "random"}
        Fixed preferences, optimal play against the player, play for the player, or coin
        flips at every choice.
    draw : tuple of int, default (8, 10, 6)
        Die sizes in the order the narrator draws them.
    hurt : {"condition", "injury"}
        What a hurt gives the player.
    plans : {"peril", "dice"}
        What the plans option does: add a peril die, or take two pool dice.
    plans_take : tuple of int, default (6, 8, 10)
        Die sizes in the order plans takes them.
    give : tuple of int, default (10, 8, 6)
        Die sizes in the order the narrator gives dice away (footing-dice).
    """

    kind: str = "fixed"
    draw: tuple[int, ...] = (8, 10, 6)
    hurt: str = "condition"
    plans: str = "peril"
    plans_take: tuple[int, ...] = (6, 8, 10)
    give: tuple[int, ...] = (10, 8, 6)

    def text(self) -> str:
        """The policy written back in the CLI's syntax."""
        if self.kind in ("optimal", "kind"):
            return self.kind
        if self.kind == "random":  # its hurt and plans are coin flips, not preferences
            return (
                f"random;draw={_dice_pref(self.draw)};plans_take={_dice_pref(self.plans_take)};"
                f"give={_dice_pref(self.give)}"
            )
        return ";".join(
            [
                f"draw={_dice_pref(self.draw)}",
                f"hurt={self.hurt}",
                f"plans={self.plans}",
                f"plans_take={_dice_pref(self.plans_take)}",
                f"give={_dice_pref(self.give)}",
            ]
        )

    def words(self) -> str:
        """The policy in plain words (the text output; `text` stays the compact form).

        >>> NarratorPolicy().words()
        'draws d8, then d10, d6; hurt: a condition; plans: one peril die; plans takes d6, then d8, d10; gives d10, then d8, d6 away'
        """
        if self.kind == "optimal":
            return "plays optimally (every choice works against the player's objective)"
        if self.kind == "kind":
            return "plays for the player (every choice maximises the player's objective)"
        hurt = (
            "a coin flip"
            if self.kind == "random"
            else ("a condition" if self.hurt == "condition" else "an injury (the player gains 2 chips)")
        )
        plans = (
            "a coin flip"
            if self.kind == "random"
            else ("one peril die" if self.plans == "peril" else "two dice from the pool")
        )
        return "; ".join(
            [
                f"draws {_dice_words(self.draw)}",
                f"hurt: {hurt}",
                f"plans: {plans}",
                f"plans takes {_dice_words(self.plans_take)}",
                f"gives {_dice_words(self.give)} away",
            ]
        )


def _dice_words(sizes, fortune: bool = False) -> str:
    """``(6, 8, 10)`` -> ``"d6, then d8, d10"`` (the order of preference); a list that
    leaves out one of d6, d8, d10 says that the types it does not name come after it.

    >>> _dice_words((12,)), _dice_words((10, 6))
    ('d12, then any other die, best first', 'd10, then d6, then any other die, best first')
    """
    names = [f"d{size}" + (" (while Fortune lasts)" if fortune and size == 6 else "") for size in sizes]
    text = names[0] + (", then " + ", ".join(names[1:]) if len(names) > 1 else "")
    if not {6, 8, 10} <= set(sizes):  # spec section 7: unnamed types follow, better-ranked first
        text += ", then any other die, best first"
    return text


def _dice_pref(sizes) -> str:
    return ">".join(f"d{s}" for s in sizes)


def _parse_dice_preference(value: str, field_name: str, key: str) -> tuple[int, ...]:
    sizes = []
    for item in value.split(">"):
        item = item.strip().lower()
        if not item.startswith("d") or not (item[1:].isascii() and item[1:].isdigit()) or int(item[1:]) < 1:
            raise InputError(field_name, f'{key}: "{item}" is not a die type; write e.g. {key}=d6>d8>d10')
        sides = int(item[1:])
        if sides in sizes:
            raise InputError(field_name, f"{key}: d{sides} is named twice")
        sizes.append(sides)
    return tuple(sizes)


def _parse_option_order(value: str, field_name: str, key: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    named = []
    for item in value.split(">"):
        item = item.strip()
        if item not in allowed:
            raise InputError(field_name, f'{key}: "{item}" is not an option; options: {" > ".join(allowed)}')
        if item in named:
            raise InputError(field_name, f"{key}: {item} is named twice")
        named.append(item)
    return tuple(named) + tuple(option for option in allowed if option not in named)


def _parse_pairs(text: str, field_name: str, names: tuple[str, ...], keys):
    if not text.strip():
        return
    for part in text.split(";"):
        part = part.strip()
        if not part:
            raise InputError(
                field_name,
                f'"{text}" has an empty part between ";"; write key=value pairs like "risk=always;break=advantage"',
            )
        key, sep, value = part.partition("=")
        if not sep:
            raise InputError(field_name, _not_a_pair(part, names, keys))
        yield key.strip(), value.strip()


def _not_a_pair(part: str, names: tuple[str, ...], keys) -> str:
    """Why ``part`` (no "=") is not understood, with the nearest word it may have meant."""
    if part in keys:
        return f'"{part}" is a key without a value; write {part}=VALUE'
    if part in names:
        return f'"{part}" is a policy of its own; it cannot be combined with key=value pairs'
    close = difflib.get_close_matches(part, names + tuple(keys), n=1)
    return (
        f'"{part}" is not a policy'
        + (f' (did you mean "{close[0]}"?)' if close else "")
        + f"; give {', '.join(names[:-1])} or {names[-1]}, or preferences as key=value pairs "
        f'separated by ";" (keys: {", ".join(keys)})'
    )


_PLAYER_KEYS = {
    "draw": ("draw", "dice"),
    "risk": ("risk", ("never", "always")),
    "risk_take": ("risk_take", "dice"),
    "break": ("break_order", BREAK_OPTIONS),
    "glitch": ("glitch_order", GLITCH_OPTIONS),
    "sideswipe_take": ("sideswipe_take", ("dice", "chips")),
}
_PLAYER_NAMES = ("optimal", "fixed")
_NARRATOR_NAMES = ("fixed", "optimal", "kind", "random")
_NARRATOR_KEYS = {
    "draw": ("draw", "dice"),
    "hurt": ("hurt", ("condition", "injury")),
    "plans": ("plans", ("peril", "dice")),
    "plans_take": ("plans_take", "dice"),
    "give": ("give", "dice"),
}


def _parse_fixed(policy, text: str, field_name: str, keys: dict, names: tuple[str, ...]):
    changes = {}
    for key, value in _parse_pairs(text, field_name, names, keys):
        if key not in keys:
            raise InputError(field_name, f'unknown policy key "{key}"; keys: {", ".join(keys)}')
        attribute, kind = keys[key]
        if attribute in changes:
            raise InputError(field_name, f'the key "{key}" is given twice; give each key once')
        if kind == "dice":
            changes[attribute] = _parse_dice_preference(value, field_name, key)
        elif key in ("break", "glitch"):
            changes[attribute] = _parse_option_order(value, field_name, key, kind)
        else:
            if value not in kind:
                raise InputError(field_name, f"{key}={value} is not allowed; {key} takes {' | '.join(kind)}")
            changes[attribute] = value
    return replace(policy, **changes)


def parse_player_policy(text: str | None) -> PlayerPolicy:
    """Read ``--player-policy``: ``optimal`` or fixed preferences like ``risk=always``.

    Parameters
    ----------
    text : str or None
        ``optimal``, ``fixed``, or ``;``-separated ``key=value`` preferences (keys ``draw``,
        ``risk``, ``risk_take``, ``break``, ``glitch``, ``sideswipe_take``), naming only what
        differs from the defaults; None or empty for the defaults.

    Returns
    -------
    PlayerPolicy
        The policy.

    Raises
    ------
    InputError
        An unknown key or value, a key given twice, an empty part.

    Examples
    --------
    >>> parse_player_policy("risk=always").risk
    'always'
    >>> parse_player_policy("optimal").kind, parse_player_policy("Optimal").kind
    ('optimal', 'optimal')
    """
    field_name = "player_policy"
    text = (text or "").strip().lower()  # the spec's words are lower case; a capital is no error
    if text in ("optimal",):
        return PlayerPolicy(kind=text)
    if text in ("fixed", "default", ""):
        return PlayerPolicy()
    if text in ("random", "kind"):
        raise InputError(field_name, f"{text} is a narrator policy; the player takes optimal or fixed preferences")
    return _parse_fixed(PlayerPolicy(), text, field_name, _PLAYER_KEYS, _PLAYER_NAMES)


def parse_narrator_policy(text: str | None) -> NarratorPolicy:
    """Read ``--narrator-policy``: ``optimal``, ``kind``, ``random`` or fixed preferences.

    Parameters
    ----------
    text : str or None
        ``optimal``, ``kind``, ``random``, ``fixed``, or ``;``-separated ``key=value``
        preferences (keys ``draw``, ``hurt``, ``plans``, ``plans_take``, ``give``); None or
        empty for the defaults.

    Returns
    -------
    NarratorPolicy
        The policy.

    Raises
    ------
    InputError
        An unknown key or value, a key given twice, an empty part.

    Examples
    --------
    >>> parse_narrator_policy("hurt=injury;plans=dice").plans, parse_narrator_policy("Kind").kind
    ('dice', 'kind')
    """
    field_name = "narrator_policy"
    text = (text or "").strip().lower()
    if text in ("optimal", "kind"):
        return NarratorPolicy(kind=text)
    if text in ("fixed", "default", ""):
        return NarratorPolicy()
    head, _, rest = text.partition(";")
    if head.strip() == "random":
        coin_flips = [
            key
            for key in ("hurt", "plans")
            if key in dict(part.partition("=")[::2] for part in rest.replace(" ", "").split(";") if part)
        ]
        if coin_flips:
            raise InputError(
                field_name,
                f"{coin_flips[0]}= is a coin flip under random; random takes only "
                "the keys of the dice it draws, takes or gives (draw, plans_take, give)",
            )
        return replace(_parse_fixed(NarratorPolicy(), rest, field_name, _NARRATOR_KEYS, _NARRATOR_NAMES), kind="random")
    return _parse_fixed(NarratorPolicy(), text, field_name, _NARRATOR_KEYS, _NARRATOR_NAMES)


def check_policy_dice(player: PlayerPolicy, narrator: NarratorPolicy, sizes) -> None:
    """A preference that names a die size the contest never holds (``draw=d12`` with a pool
    of d6, d8 and d10) is a slip, not a preference: an `InputError` naming the policy. The
    spec's default orders (d6, d8, d10) may name sizes a small pool lacks.

    >>> check_policy_dice(parse_player_policy("draw=d12"), NarratorPolicy(), {6, 8, 10})
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: player_policy: draw=d12 names d12, which no hand, pool or reserve of this contest holds (its dice: d6, d8, d10)
    """
    held = set(sizes)
    for field, policy, keys in (
        ("player_policy", player, ("draw", "risk_take")),
        ("narrator_policy", narrator, ("draw", "plans_take", "give")),
    ):
        if policy.kind in ("optimal", "kind"):
            continue
        default = type(policy)()
        for key in keys:
            named = [size for size in getattr(policy, key) if size not in held and size not in getattr(default, key)]
            if named:
                given = "=".join([key, ">".join(f"d{size}" for size in getattr(policy, key))])
                raise InputError(
                    field,
                    f"{given} names d{named[0]}, which no hand, pool or reserve of this contest "
                    f"holds (its dice: {', '.join(f'd{size}' for size in sorted(held))})",
                )
