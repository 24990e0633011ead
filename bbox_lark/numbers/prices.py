"""Estimated cost (§13): each request priced on its own with the ``genai-prices`` table (the
``prices`` extra), :class:`Pricer` and :func:`estimate_cost`; :func:`format_usd` for showing
an amount. The rules are in :mod:`bbox_lark.numbers.session`'s docstring, "Cost"."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from decimal import Context, Decimal
from functools import cache
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.numbers.usage import Usage

# -- estimated cost ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimated cost in USD (None when it cannot be estimated) and why not."""

    cost_usd: Decimal | None
    #: Why there is no estimate; None when there is one.
    note: str | None = None
    #: True when some usage named no cache writes (§13): the estimate is a lower bound.
    lower_bound: bool = False


_PRICES_MISSING = "genai-prices is not installed (pip install 'bbox-lark[prices]')"


class Pricer:
    """Adds up the estimated cost of model requests, one :meth:`add` per request (a
    response, or a step's ``# metrics``): price tables have tiers by a request's input size,
    so requests are priced one by one, never summed first. ``genai-prices`` is imported at
    the first request. No estimate when a request's model is unknown (not named, or not in
    the table): a partial sum would read as the whole.

    Pricing a request with ``genai-prices`` costs about 0.2 ms, most of ``stats``' time on a
    long session. Within one tier a model's price is linear in the token counts, so where
    :func:`_linear_price` could read the price as a line per tier (checked against
    ``genai-prices`` itself), a request only adds its counts to its tier's sums and the sums
    are priced once: the same Decimal, exactly (``tests/test_prices.py`` compares the two
    ways)."""

    __slots__ = ("_priced", "_sums", "_usage_class", "lower_bound", "note")

    def __init__(self) -> None:
        self.note: str | None = "no usage"
        #: True once a request named no cache writes (§13): its writes, if any, are priced
        #: as plain input, so the estimate is a lower bound.
        self.lower_bound = False
        self._usage_class: Any = None
        #: What requests priced one by one came to.
        self._priced = Decimal(0)
        #: Per model and tier: [requests, input, cache reads, cache writes, output].
        self._sums: dict[tuple[str, int], list[int]] = {}

    def add(self, model: str | None, usage: Usage) -> None:
        if usage.empty or (self.note is not None and self.note != "no usage"):
            return
        if model is None:
            self.note = "no model named"
            return
        if self._usage_class is None:
            try:
                from genai_prices import Usage as PriceUsage
            except ImportError:
                self.note = _PRICES_MISSING
                return
            self._usage_class = PriceUsage
        cached = usage.tokens_cached or 0
        if usage.tokens_cache_write is None:
            self.lower_bound = True
        model_price = _model_price(model)
        if model_price is None:
            self.note = f"no price for model {model}"
            return
        self.note = None
        counts = (
            (usage.tokens_in or 0) + cached,
            cached,
            min(usage.tokens_cache_write or 0, usage.tokens_in or 0),
            usage.tokens_out or 0,
        )
        line = _linear_price(model)
        if line is not None:
            sums = self._sums.get((model, tier := bisect.bisect_left(line[0], counts[0])))
            if sums is None:
                self._sums[(model, tier)] = [1, *counts]
            else:
                sums[0] += 1
                sums[1] += counts[0]
                sums[2] += counts[1]
                sums[3] += counts[2]
                sums[4] += counts[3]
            return
        price = model_price.calc_price(_price_usage(self._usage_class, counts))
        self._priced += Decimal(str(price["total_price"]))

    @property
    def total(self) -> Decimal | None:
        """The estimated cost so far; None when there is none (:attr:`note` says why)."""
        if self.note is not None:
            return None
        total = self._priced
        for (model, tier), sums in self._sums.items():
            line = _linear_price(model)
            assert line is not None
            coefficients = line[1][tier]
            total += sum((c * n for c, n in zip(coefficients, sums, strict=True)), Decimal(0))
        return total

    @property
    def estimate(self) -> Estimate:
        total = self.total
        return Estimate(total, self.note, self.lower_bound and total is not None)


def _price_usage(usage_class: Any, counts: tuple[int, int, int, int]) -> Any:
    """``genai-prices``' usage of one request: input (cache reads included), cache reads,
    cache writes, output."""
    return usage_class(
        input_tokens=counts[0],
        cache_read_tokens=counts[1],
        cache_write_tokens=counts[2],
        output_tokens=counts[3],
    )


#: A tier's price as a line: per request, per input token, per cache read, per cache
#: write, per output token.
Line = tuple[Decimal, Decimal, Decimal, Decimal, Decimal]


@cache
def _linear_price(model: str) -> tuple[tuple[int, ...], tuple[Line, ...]] | None:
    """The tiers' input thresholds of ``model``'s price (a request whose input exceeds ``k``
    of them is in tier ``k``) and each tier's price as a :data:`Line`, read from
    ``genai-prices`` itself at a point of the tier and checked at others; None when the price
    is not such a line there (then each request is priced by ``genai-prices``)."""
    from genai_prices import Usage as PriceUsage
    from genai_prices.types import TieredPrices

    model_price = _model_price(model)
    if model_price is None:
        return None
    tiered = [value for value in vars(model_price).values() if isinstance(value, TieredPrices)]
    thresholds = sorted({tier.start for value in tiered for tier in value.tiers})

    def price(*counts: int) -> Decimal:
        assert len(counts) == 4
        return Decimal(str(model_price.calc_price(_price_usage(PriceUsage, counts))["total_price"]))

    lines: list[Line] = []
    bounds = [-1, *thresholds, None]
    for tier in range(len(thresholds) + 1):
        low, high = bounds[tier] + 2, bounds[tier + 1]  # type: ignore[operator]
        top = low + 10**7 if high is None else high
        if top - low < 1000:  # a tier too narrow to read a line from
            return None
        at = price(low, 0, 0, 0)
        per_input = price(low + 1, 0, 0, 0) - at
        line = (
            at - per_input * low,
            per_input,
            price(low, 1, 0, 0) - at,
            price(low, 0, 1, 0) - at,
            price(low, 0, 0, 1) - at,
        )
        for counts in ((top, top // 3, top // 5, 7777), ((low + top) // 2, 0, 999, 123_457), (top, 0, 0, 1)):
            expected = line[0] + sum((c * n for c, n in zip(line[1:], counts, strict=True)), Decimal(0))
            if price(*counts) != expected:
                return None
        lines.append(line)
    return tuple(thresholds), tuple(lines)


def format_usd(value: Decimal) -> str:
    """A cost as every page and table shows it: dollars to a millionth (a price goes no
    finer), trailing zeros dropped (``$0.462381``, ``$12.5``). JSON keeps the exact value; a
    stated float's binary tail (``0.46238100000000004``) is not shown."""
    # Enough digits for every whole dollar: the default 28 would raise on a longer amount
    # (quantize) or round it (normalize); a stated cost may be as long as its writer likes.
    exact = Context(prec=max(28, value.adjusted() + 8))
    shown = value.quantize(Decimal("0.000001"), context=exact) if value.as_tuple().exponent < -6 else value  # type: ignore[operator]
    text = f"{shown.normalize(exact):f}"
    return f"${text}"


@cache
def _model_price(model: str) -> Any:
    """``genai-prices``' price of ``model`` today, or None when the table has none. Finding
    the model is most of ``calc_price``'s time (0.7 ms a request against 0.17 ms for the
    price's own arithmetic), so each model is looked up once; the price does not depend on
    the request (its tiers are applied by ``ModelPrice.calc_price``)."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    try:
        return calc_price(PriceUsage(input_tokens=0, output_tokens=0), model_ref=model).model_price
    except LookupError:
        return None


def estimate_cost(requests: Iterable[tuple[str | None, Usage]]) -> Estimate:
    """The cost of these requests (model, usage) at ``genai-prices``' list prices."""
    pricer = Pricer()
    for model, usage in requests:
        pricer.add(model, usage)
    return pricer.estimate
