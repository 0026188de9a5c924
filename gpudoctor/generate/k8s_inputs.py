"""The checks on what a person gives ``fleet k8s``: a namespace, image references, a runtime class.

Each value lands in a manifest as quoted data (``k8s_yaml``), so this is not about escaping: a value Kubernetes
or the container runtime would refuse is refused here, in one line, before any file is written.
"""

from __future__ import annotations

import re

from gpudoctor.errors import UsageError

# A DNS-1123 label (namespaces): lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63
# characters (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label).
_DNS1123_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
# A DNS-1123 subdomain (RuntimeClass names): labels joined by '.', at most 253 characters (IsDNS1123Subdomain).
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")

# An image reference, the grammar of github.com/distribution/reference (regexp.go): [domain[:port]/]path[:tag]
# [@digest], the path's components lower-case, a tag of at most 128 word characters, '.' and '-'.  IPv6 domains
# are left out (no registry of a GPU fleet needs one, and their brackets add nothing but risk here).
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
# A first component is a registry only with a '.', a port or as "localhost" (distribution/reference's
# splitDockerDomain); otherwise it is a path component and must be lower-case like the rest.
_DOMAIN = rf"(?:localhost|{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})+|{_DOMAIN_COMPONENT}(?=:))(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(rf"(?P<name>{_NAME})(?::{_TAG})?(?:@{_DIGEST})?", re.ASCII)
_NAME_LIMIT = 255  # distribution/reference: NameTotalLengthMax
_SHOWN = 60


def _shown(value: str) -> str:
    """The value as a person can read it in one line: repr() escapes controls, and it is capped."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def checked_namespace(value: str) -> str:
    if not _DNS1123_LABEL.fullmatch(value):
        raise UsageError(
            f"--namespace {_shown(value)} is not a Kubernetes namespace name: lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters"
        )
    return value


def checked_image(value: str, flag: str = "--image") -> str:
    match = _IMAGE.fullmatch(value)
    if not match or len(match.group("name")) > _NAME_LIMIT:
        raise UsageError(
            f"{flag} {_shown(value)} is not an image reference: [REGISTRY[:PORT]/]PATH[:TAG][@sha256:DIGEST], "
            "the path lower-case (e.g. registry.example.com/gpu/gpudoctor-node:0.1.0)"
        )
    return value


def checked_runtime_class(value: str) -> str:
    """A RuntimeClass name, or '' for none (the cluster's default runtime already exposes the GPUs)."""
    if value == "" or (len(value) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(value)):
        return value
    raise UsageError(
        f"--runtime-class {_shown(value)} is not a RuntimeClass name: lower-case letters, digits, '-' and '.', "
        "at most 253 characters (or '' for the cluster's default runtime)"
    )
