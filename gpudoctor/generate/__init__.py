"""The generators' room: text files (a Dockerfile, an install script) written from facts and the knowledge base.

A generator never runs a check and never touches the machine: it takes a request (what to build, for which
driver, distro and Python) and returns the text with the choices it made, or refuses with the nearest working
request.  Templates for the Dockerfile live in the top-level ``dockerfiles/`` folder (installed as the
``gpudoctor_dockerfiles`` package).
"""
