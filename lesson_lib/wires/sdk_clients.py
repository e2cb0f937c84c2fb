"""How each official SDK is pointed at a server: the code a learner types, one home per SDK.

Each value is an `SDKRoute`'s ``imports`` and ``client`` (``{url}`` standing for the server's
root URL, ``http://127.0.0.1:8765``), so a wire's route takes its SDK's with ``**ANTHROPIC``.
Every client has its retries off: against a course server a retry only hides the fault the
room is looking at (and a 429's ``retry-after`` makes an SDK sit silent for half a minute).
google-genai retries nothing unless asked, so its line names no retry option. The SDKs differ
in where the URL goes: anthropic's and google-genai's ``base_url`` is the root, OpenAI's adds
its paths after ``/v1``, and boto3 takes an ``endpoint_url`` (any region, placeholder
credentials: it signs, and the course's server reads no signature).
"""

from __future__ import annotations

ANTHROPIC = {"imports": "import anthropic",
             "client": 'anthropic.Anthropic(base_url="{url}", api_key="unused", max_retries=0)'}
OPENAI = {"imports": "import openai",
          "client": 'openai.OpenAI(base_url="{url}/v1", api_key="unused", max_retries=0)'}
GOOGLE_GENAI = {"imports": "from google import genai\nfrom google.genai import types",
                "client": 'genai.Client(api_key="unused", '
                          'http_options=types.HttpOptions(base_url="{url}"))'}
BOTO3 = {"imports": "import boto3\nfrom botocore.config import Config",
         "client": 'boto3.client("bedrock-runtime", endpoint_url="{url}", '
                   'region_name="us-east-1", aws_access_key_id="unused", '
                   'aws_secret_access_key="unused", '
                   'config=Config(retries={"total_max_attempts": 1}))'}
