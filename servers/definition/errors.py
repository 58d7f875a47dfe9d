"""The error every part of the definition format raises."""


class DefinitionError(Exception):
    """A definition that cannot be imported; `errors` holds one message per problem, each
    starting with the path of the offending field."""

    def __init__(self, errors) -> None:
        if isinstance(errors, str):
            errors = [errors]
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))
