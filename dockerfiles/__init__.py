"""The Dockerfile templates that ``gpudoctor dockerfile`` fills, shipped as package data of ``gpudoctor_dockerfiles``.

Nothing to import here: ``gpudoctor.generate.dockerfile`` reads the ``*.tmpl`` files next to this module with
importlib.resources (see README.md for the placeholders each template takes).
"""
