"""Where a profile's requests go: deployment-style paths (Azure `/openai/deployments/{deployment}/...`) that
name the model in the URL instead of (or besides) the body."""

from __future__ import annotations

from urllib.parse import unquote

from harness.protocols.openai.profile import Profile

_SUFFIX = "/chat/completions"


def model_from_path(profile: Profile, path: str) -> str | None:
    """The model (deployment) a request path names, for profiles whose model is a path segment; None when the
    profile names models in the body or the path is not the deployment form (e.g. an OpenAI SDK's
    `/v1/chat/completions` passed through unchanged, whose body names the model)."""
    if not profile.model_in_path:
        return None
    prefix = profile.base_path.rstrip("/") + "/"
    if not (path.startswith(prefix) and path.endswith(_SUFFIX)):
        return None
    segment = path[len(prefix) : -len(_SUFFIX)]
    if not segment or "/" in segment:
        return None
    return unquote(segment)
