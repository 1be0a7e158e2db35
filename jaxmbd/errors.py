"""The errors jaxmbd raises on purpose, under one base.

Every one of them means "the input or the run is wrong, and the message says where": a model, a
system file, hydrodynamic data, a scenario, a sweep folder, a result file, or a simulation that
cannot go on.  The message is one line that names the file, the field and what was expected; the
command line prints it as it is (exit status 2).  Anything else escaping jaxmbd is a defect.
"""


class JaxmbdError(Exception):
    """Base of the errors below; ``except jaxmbd.JaxmbdError`` catches every input or run error."""


class InputError(JaxmbdError, ValueError):
    """A value given to a function or a constructor that it cannot take (a shape, a range, a name); the
    message says which and what was expected.  Still a ``ValueError`` for callers that catch that."""


class InputTypeError(JaxmbdError, TypeError):
    """An argument of the wrong kind (a table where a number belongs, an undeclared field).  Still a
    ``TypeError`` for callers that catch that."""


class UnknownNameError(JaxmbdError, KeyError):
    """A name (a body, a joint, an output) that the model or the run does not have; the message lists
    those it has.  Still a ``KeyError`` for callers that catch that."""

    def __str__(self):  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0]) if self.args else ""


class DataFileNotFoundError(JaxmbdError, FileNotFoundError):
    """A data file (hydrodynamic coefficients, a WAMIT output) that is not where it was said to be."""


class SimulationError(JaxmbdError, RuntimeError):
    """A run that failed: the message says when and where."""
