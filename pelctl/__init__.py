"""pelctl: inspect and safely repair Redis Streams consumer-group Pending Entries Lists."""

__version__ = "0.1.0"


# The library surface loads on first use, so ``import pelctl`` stays light (no redis-py).
_LAZY = {
    "ReliableConsumer": "pelctl.consumer",
    "Message": "pelctl.consumer",
    "ConsumerStats": "pelctl.consumer",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pelctl' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LAZY))
