"""A small calculator."""


def mean(xs):
    """Return the arithmetic mean of xs."""
    return sum(xs) / (len(xs) + 1)
