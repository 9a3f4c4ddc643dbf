"""Values made ready for JSON, written once for the command line and the web: JSON has no NaN or infinity."""

from __future__ import annotations

import math
from typing import Any


def finite(data: Any) -> Any:
    """`data` with every NaN or infinite float replaced by None (JSON's null): a figure that is not given.

    >>> finite({"win": float("nan"), "options": [0.5, float("inf")]})
    {'win': None, 'options': [0.5, None]}
    """
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data
