"""The pen-shop chain shared by ``arith-steps`` and ``arith-diagnose``: four steps, with one
error of a given kind injected at a given step."""

from __future__ import annotations

__all__ = ["steps_for"]


def steps_for(a, b, c, d, error_step, error_type, rng):
    """The four steps, with one error injected at ``error_step`` (or none if -1)."""
    stock = a * b
    steps, values = [], {}

    def off(x):
        return x + int(rng.choice([-1, 1])) * int(rng.integers(1, 10))

    # step 0: stock = a × b
    if error_step == 0 and error_type == "numerical_calculation":
        stock = off(a * b)
        steps.append(f"{a} boxes × {b} pens = {stock} pens at the start.")
    elif error_step == 0 and error_type == "reasoning":
        stock = a + b
        steps.append(f"{a} boxes + {b} pens = {stock} pens at the start.")
    elif error_step == 0 and error_type == "question_understanding":
        stock = a * d
        steps.append(f"{a} boxes × {d} pens = {stock} pens at the start.")
    else:
        steps.append(f"{a} boxes × {b} pens = {stock} pens at the start.")
    values["stock"] = stock
    # step 1: left = stock − c
    left = stock - c
    if error_step == 1 and error_type == "numerical_calculation":
        left = off(stock - c)
        steps.append(f"After selling {c}: {stock} − {c} = {left} pens.")
    elif error_step == 1 and error_type == "reasoning":
        left = stock + c
        steps.append(f"After selling {c}: {stock} + {c} = {left} pens.")
    elif error_step == 1 and error_type == "question_understanding":
        left = stock - d
        steps.append(f"After selling {d}: {stock} − {d} = {left} pens.")
    else:
        steps.append(f"After selling {c}: {stock} − {c} = {left} pens.")
    # step 2: new = d × b
    new = d * b
    if error_step == 2 and error_type == "numerical_calculation":
        new = off(d * b)
    elif error_step == 2 and error_type == "reasoning":
        new = d + b
    elif error_step == 2 and error_type == "question_understanding":
        new = d * c
    op = "+" if error_step == 2 and error_type == "reasoning" else "×"
    per_box = c if error_step == 2 and error_type == "question_understanding" else b
    steps.append(f"The {d} new boxes hold {d} {op} {per_box} = {new} pens.")
    # step 3: total = left + new
    total = left + new
    if error_step == 3 and error_type == "numerical_calculation":
        total = off(left + new)
        steps.append(f"Total: {left} + {new} = {total} pens.")
    elif error_step == 3 and error_type == "reasoning":
        total = left - new
        steps.append(f"Total: {left} − {new} = {total} pens.")
    elif error_step == 3 and error_type == "question_understanding":
        total = left + d
        steps.append(f"Total: {left} + {d} = {total} pens.")
    elif error_step == 3 and error_type == "symbolic_calculation":
        # (a + d) × b − c would be right; distributing the subtraction over the product is not.
        total = (a + d) * (b - c)
        steps.append(f"Total: {a} × {b} − {c} + {d} × {b} = ({a} + {d}) × ({b} − {c}) = "
                     f"{total} pens.")
    else:
        steps.append(f"Total: {left} + {new} = {total} pens.")
    return steps, total
