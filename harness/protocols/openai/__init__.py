"""OpenAI Chat Completions and the OpenAI-compatible provider profiles (one codec per `profiles.PROFILES`
entry, registered under the profile's name with its facts from `facts.py`). Private to `harness.protocols`: the
engine reaches these codecs through the registry."""

from harness.protocols.openai.codec import OpenAICodec
from harness.protocols.openai.facts import facts_of
from harness.protocols.openai.losses import LOSSES, RESHAPES
from harness.protocols.openai.profile import Profile
from harness.protocols.openai.profiles import DEEPSEEK, GROQ, OPENAI, PROFILES
from harness.protocols.registry import register

for _profile in PROFILES:
    register(OpenAICodec(_profile), facts=facts_of(_profile))

__all__ = ["DEEPSEEK", "GROQ", "LOSSES", "OPENAI", "PROFILES", "RESHAPES", "OpenAICodec", "Profile"]
