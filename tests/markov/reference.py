"""Independent dense exact evaluation with sympy, for checking the solver."""

from __future__ import annotations

import sympy

from exactdice.markov.model import Chance, Decision, Terminal

__all__ = ["reachable_nodes", "dense_evaluate"]


def reachable_nodes(model):
    """Every reachable state -> its node, by plain breadth-first search."""
    nodes, frontier = {}, [model.initial_state()]
    while frontier:
        state = frontier.pop()
        if state in nodes:
            continue
        node = model.expand(state)
        nodes[state] = node
        if isinstance(node, Chance):
            frontier.extend(successor for _, successor, _ in node.branches)
        elif isinstance(node, Decision):
            frontier.extend(successor for _, successor, _ in node.actions)
    return nodes


def dense_evaluate(model, nodes, policy, payoff, endless=0):
    """Absorption, never-ends, steps, rewards and value at the initial state when each
    decision state follows ``policy[state]`` (an action index), via (I - Q) x = b
    (sympy's exact LU solve over QQ)."""
    outcomes, rewards_width = model.outcomes, len(model.reward_names)

    def moves(state):
        node = nodes[state]
        if isinstance(node, Decision):
            _, successor, rewards = node.actions[policy[state]]
            return [(sympy.Integer(1), successor, rewards)], False
        total = sum(weight for weight, _, _ in node.branches)
        return [
            (sympy.Rational(weight, total), successor, rewards) for weight, successor, rewards in node.branches
        ], True

    live = {state for state, node in nodes.items() if isinstance(node, Terminal)}
    changed = True
    while changed:
        changed = False
        for state in nodes:
            if state not in live and not isinstance(nodes[state], Terminal):
                if any(successor in live for _, successor, _ in moves(state)[0]):
                    live.add(state)
                    changed = True
    transient = sorted((s for s in live if not isinstance(nodes[s], Terminal)), key=repr)
    position = {state: i for i, state in enumerate(transient)}
    size = len(transient)
    columns = len(outcomes) + 1 + rewards_width
    matrix = sympy.eye(size)
    rhs = sympy.zeros(size, columns)
    for state in transient:
        row = position[state]
        step_moves, is_chance = moves(state)
        if is_chance:
            rhs[row, len(outcomes)] += 1
        for probability, successor, rewards in step_moves:
            node = nodes[successor]
            if isinstance(node, Terminal):
                rhs[row, outcomes.index(node.outcome)] += probability
            elif successor in position:
                matrix[row, position[successor]] -= probability
            if rewards:
                for slot, amount in enumerate(rewards):
                    rhs[row, len(outcomes) + 1 + slot] += probability * amount
    start = model.initial_state()
    if isinstance(nodes[start], Terminal):
        absorption = {name: sympy.Integer(name == nodes[start].outcome) for name in outcomes}
        steps, rewards = sympy.Integer(0), [sympy.Integer(0)] * rewards_width
    elif start not in position:
        absorption = {name: sympy.Integer(0) for name in outcomes}
        steps, rewards = None, None
    else:
        from sympy.polys.matrices import DomainMatrix

        solution = (
            DomainMatrix.from_Matrix(matrix)
            .convert_to(sympy.QQ)
            .lu_solve(DomainMatrix.from_Matrix(rhs).convert_to(sympy.QQ))
            .to_Matrix()
        )
        row = position[start]
        absorption = {name: solution[row, i] for i, name in enumerate(outcomes)}
        steps = solution[row, len(outcomes)]
        rewards = [solution[row, len(outcomes) + 1 + slot] for slot in range(rewards_width)]
    never = 1 - sum(absorption.values())
    if never != 0:
        steps, rewards = None, None
    value = (
        sum(sympy.Rational(payoff.get(name, 0)) * p for name, p in absorption.items()) + sympy.Rational(endless) * never
    )
    return {"absorption": absorption, "never": never, "steps": steps, "rewards": rewards, "value": value}
