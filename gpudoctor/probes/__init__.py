"""Framework probes: stdlib-only scripts that run inside the *target* Python, one process per framework.

gpudoctor never imports these modules (nor torch, TensorFlow, JAX or CuPy): it runs each probe by file
path, as ``TARGET_PYTHON gpudoctor/probes/torch_probe.py``, with a timeout, and keeps the one JSON
document the probe prints on stdout as evidence (``framework-torch.json`` and so on).  The JSON
contract is the docstring of :mod:`gpudoctor.facts.framework_model` (the smoke probes':
:mod:`gpudoctor.facts.smoke_model`); each probe's docstring lists the keys it adds, and
:mod:`gpudoctor.probes.protocol` holds the constants both sides share.  Run as scripts, the probes import
their neighbours here by plain name (``import _probe_common``); imported as ``gpudoctor.probes.x``
(gpudoctor itself, the tests), relatively.  The probes must run under any Python from 3.8 on with
nothing but the standard library and the framework they look at.
"""
