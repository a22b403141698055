"""The one error type that reaches a person or a model."""


class ReMeError(ValueError):
    """A bad argument or an unusable file: one line saying what was wrong and what is accepted.

    The MCP face turns it into a tool error and the CLI into a message on stderr;
    anything else is a bug and is logged with its traceback on the server side only.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def shown(value: object, limit: int = 80) -> str:
    """A value as an error message may quote it: repr, cut short, so a huge argument is not echoed back."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
