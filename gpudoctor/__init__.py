"""gpudoctor: check, smoke-test and set up GPU deep-learning machines.

This module must stay import-free: ``gpudoctor --version`` reads ``__version__``
and nothing else, so importing the package must not pull in rich, pynvml,
psutil or any framework.
"""

__version__ = "0.1.0"
