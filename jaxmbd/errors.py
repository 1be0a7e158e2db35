"""The errors jaxmbd raises on purpose, under one base.

Every one of them means "the input or the run is wrong, and the message says where": a model, a
system file, hydrodynamic data, a scenario, a sweep folder, a result file, or a simulation that
cannot go on.  The message is one line that names the file, the field and what was expected; the
command line prints it as it is (exit status 2).  Anything else escaping jaxmbd is a defect.
"""


class JaxmbdError(Exception):
    """Base of the errors below; ``except jaxmbd.JaxmbdError`` catches every input or run error."""
