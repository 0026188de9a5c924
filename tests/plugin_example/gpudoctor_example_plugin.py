"""An example third-party check module: one check that works, one that crashes on purpose."""

from gpudoctor.api import check, ok


@check("XMPL001", area="example", title="Example plugin check")
def example(facts, ctx):
    """What it checks: how many GPUs the driver reports (an example of reading facts).

    Why it matters: it proves third-party checks run through the plugin API.

    How to fix: nothing to fix.
    """
    return ok(f"plugin sees {len(facts.gpus)} GPU(s)", data={"gpus": len(facts.gpus)})


@check("XMPL002", area="example", title="Example plugin check that crashes")
def broken(facts, ctx):
    """What it checks: nothing; it raises to show a crashing check is contained.

    Why it matters: one broken plugin must not hide the other results.

    How to fix: fix the plugin.
    """
    raise RuntimeError("deliberate failure in an example plugin")
