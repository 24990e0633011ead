"""Estimated cost (§13): each request priced on its own with the ``genai-prices`` table (the
``prices`` extra), :class:`Pricer` and :func:`estimate_cost`; :func:`format_usd` for showing
an amount. The rules are in :mod:`bbox_lark.numbers.session`'s docstring, "Cost"."""

from __future__ import annotations

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
    the table): a partial sum would read as the whole."""

    __slots__ = ("_calc", "_usage_class", "lower_bound", "note", "total")

    def __init__(self) -> None:
        self.total: Decimal | None = None
        self.note: str | None = "no usage"
        #: True once a request named no cache writes (§13): its writes, if any, are priced
        #: as plain input, so the estimate is a lower bound.
        self.lower_bound = False
        self._calc: Any = None
        self._usage_class: Any = None

    def add(self, model: str | None, usage: Usage) -> None:
        if usage.empty or (self.note is not None and self.note != "no usage"):
            return
        if model is None:
            self.total, self.note = None, "no model named"
            return
        if self._calc is None:
            try:
                from genai_prices import Usage as PriceUsage
                from genai_prices import calc_price
            except ImportError:
                self.total, self.note = None, _PRICES_MISSING
                return
            self._calc, self._usage_class = calc_price, PriceUsage
        cached = usage.tokens_cached or 0
        if usage.tokens_cache_write is None:
            self.lower_bound = True
        model_price = _model_price(model)
        if model_price is None:
            self.total, self.note = None, f"no price for model {model}"
            return
        price = model_price.calc_price(
            self._usage_class(
                input_tokens=(usage.tokens_in or 0) + cached,
                cache_read_tokens=cached,
                cache_write_tokens=min(usage.tokens_cache_write or 0, usage.tokens_in or 0),
                output_tokens=usage.tokens_out or 0,
            )
        )
        self.total = (self.total or Decimal(0)) + Decimal(str(price["total_price"]))
        self.note = None

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.total, self.note, self.lower_bound and self.total is not None)


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
